// Queue tags (SQS's TagQueue/ListQueueTags, as a configuration field) and a
// queue's update time (SQS's LastModifiedTimestamp): what create and update
// do with them, what they refuse, and a record from before them.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import { queueKey } from "../../src/store/key-layout.js";
import { createLevelDatabase } from "../../src/store/level-batch.js";
import { FakeClock } from "../support/fake-clock.js";
import { makeTempDir } from "../support/temp-dir.js";
import { expectFailure, openBrokerHarness, receiveOne, sendText, type BrokerHarness } from "./broker-harness.js";

describe("queue tags and update time", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  describe("tags", () => {
    it("creates a queue with its tags and keeps them across a restart", async () => {
      const tags = { team: "payments", env: "", ключ: "値 🎉" };
      expect((await h.broker.createQueue("q", { tags })).config.tags).toEqual(tags);
      await h.restart();
      expect(h.broker.getQueue("q").config.tags).toEqual(tags);
      await h.broker.createQueue("untagged");
      expect(h.broker.getQueue("untagged").config.tags).toEqual({});
    });

    it("counts tags in CreateQueue's same-configuration check, in any order", async () => {
      await h.broker.createQueue("q", { tags: { a: "1", b: "2" } });
      await h.broker.createQueue("q", { tags: { b: "2", a: "1" } });
      await expectFailure(() => h.broker.createQueue("q", { tags: { a: "1" } }), "QUEUE_ALREADY_EXISTS");
      await expectFailure(() => h.broker.createQueue("q", { tags: { a: "1", b: "3" } }), "QUEUE_ALREADY_EXISTS");
      await expectFailure(() => h.broker.createQueue("q", { tags: { a: "1", c: "2" } }), "QUEUE_ALREADY_EXISTS");
      await expectFailure(() => h.broker.createQueue("q"), "QUEUE_ALREADY_EXISTS");
      expect(h.broker.getQueue("q").config.tags).toEqual({ a: "1", b: "2" });
    });

    it("are replaced by UpdateQueue with the rest of the configuration: left out, they are gone", async () => {
      await h.broker.createQueue("q", { tags: { a: "1", b: "2" } });
      expect((await h.broker.updateQueue("q", { tags: { c: "3" } })).config).toEqual({
        ...defaultQueueConfig,
        tags: { c: "3" },
      });
      expect((await h.broker.updateQueue("q", { delayMs: 1000 })).config.tags).toEqual({});
      await h.restart();
      expect(h.broker.getQueue("q").config.tags).toEqual({});
    });

    it("accepts 50 tags, keys of 128 characters and values of 256, counted in characters, not bytes", async () => {
      const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`k${index}`, "v"]));
      await h.broker.createQueue("many", { tags: fifty });
      const longest = { [`${"é".repeat(127)}🎉`]: `${"ü".repeat(255)}🎉` };
      expect((await h.broker.createQueue("long", { tags: longest })).config.tags).toEqual(longest);
    });

    it("refuses bad tags with INVALID_ARGUMENT naming the tag, creating and changing nothing", async () => {
      const fiftyOne = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, "v"]));
      await expectFailure(() => h.broker.createQueue("q", { tags: fiftyOne }), "INVALID_ARGUMENT", "config.tags");
      await expectFailure(
        () => h.broker.createQueue("q", { tags: { "": "v" } }),
        "INVALID_ARGUMENT",
        'config.tags[""]',
      );
      const longKey = "k".repeat(129);
      await expectFailure(
        () => h.broker.createQueue("q", { tags: { [longKey]: "v" } }),
        "INVALID_ARGUMENT",
        `config.tags["${longKey}"]`,
      );
      await expectFailure(
        () => h.broker.createQueue("q", { tags: { team: "v".repeat(257) } }),
        "INVALID_ARGUMENT",
        'config.tags["team"]',
      );
      expect(h.broker.listQueues().queues).toEqual([]);
      await h.broker.createQueue("q", { tags: { team: "a" } });
      await expectFailure(
        () => h.broker.updateQueue("q", { tags: { 'say "hi"': "v".repeat(257) } }),
        "INVALID_ARGUMENT",
        'config.tags["say \\"hi\\""]',
      );
      expect(h.broker.getQueue("q").config.tags).toEqual({ team: "a" });
    });
  });

  describe("update time", () => {
    it("is the create time at first, then the time of each UpdateQueue, even one that changes nothing", async () => {
      const created = await h.broker.createQueue("q");
      expect(created.updateTime).toBe(created.createTime);
      h.clock.advance(5000);
      const updated = await h.broker.updateQueue("q", { delayMs: 1000 });
      expect(updated.createTime).toBe(created.createTime);
      expect(updated.updateTime).toBe(created.createTime + 5000);
      h.clock.advance(1000);
      expect((await h.broker.updateQueue("q", { delayMs: 1000 })).updateTime).toBe(created.createTime + 6000);
      await h.restart();
      expect(h.broker.getQueue("q")).toMatchObject({
        createTime: created.createTime,
        updateTime: created.createTime + 6000,
      });
    });

    it("is left alone by everything but UpdateQueue: a CreateQueue that finds the queue, sends, receives, purges", async () => {
      const created = await h.broker.createQueue("q");
      h.clock.advance(1000);
      await h.broker.createQueue("q");
      await sendText(h, "q", "m");
      await receiveOne(h, "q");
      await h.broker.purgeQueue("q");
      h.clock.advance(1000);
      await h.broker.runMaintenance();
      expect(h.broker.getQueue("q").updateTime).toBe(created.createTime);
      expect(h.broker.listQueues().queues[0]!.updateTime).toBe(created.createTime);
    });
  });

  it("loads a queue record stored before tags and update times as untagged, updated at creation", async () => {
    const dir = await makeTempDir("holdshelf-old-record-");
    const clock = new FakeClock();
    try {
      // A store with its handle key, then the record exactly as holdshelf 0.1.0 wrote it.
      await (await ClassicLevelStore.open({ dataDir: dir.path, durability: "os" })).close();
      const { tags: _, ...configBefore } = defaultQueueConfig;
      const old = { name: "old", queueId: 1, dataId: 1, config: configBefore, createTime: clock.now() - 60_000 };
      const db = createLevelDatabase(dir.path);
      await db.open();
      await db.put(queueKey("old"), Buffer.from(JSON.stringify(old), "utf8"));
      await db.close();

      const store = await ClassicLevelStore.open({ dataDir: dir.path, durability: "os" });
      const broker = await Broker.open({ store, clock });
      try {
        const loaded = broker.getQueue("old");
        expect(loaded.config).toEqual({ ...configBefore, tags: {} });
        expect(loaded).toMatchObject({ createTime: old.createTime, updateTime: old.createTime });
        // The same configuration as before counts as the same, tags and all.
        await broker.createQueue("old");
        expect((await broker.updateQueue("old", { tags: { now: "tagged" } })).updateTime).toBe(clock.now());
      } finally {
        broker.close();
        await broker.settled();
        await store.close();
      }
    } finally {
      await dir.remove();
    }
  });
});
