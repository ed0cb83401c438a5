import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultQueueConfig, type QueueConfig, type QueueLimits } from "../../src/broker/queue-config.js";
import { Code } from "../../src/protocol/error-reasons.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const second = 1000;
const day = 24 * 3600 * second;

describe("queue admin", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  describe("createQueue", () => {
    it("creates a queue with the default configuration, no messages and the clock's time", async () => {
      const info = await h.broker.createQueue("orders");
      expect(info).toEqual({
        name: "orders",
        config: defaultQueueConfig,
        createTime: h.clock.now(),
        updateTime: h.clock.now(),
        counts: { visible: 0, inFlight: 0, delayed: 0, oldestSendTime: undefined },
        oldestMessageAgeMs: undefined,
        deadLetterSourceQueues: [],
      });
      expect(defaultQueueConfig).toEqual({
        visibilityTimeoutMs: 30_000,
        delayMs: 0,
        retentionMs: 4 * day,
        maxMessageBytes: 1_048_576,
        receiveWaitTimeMs: 0,
        maxInFlight: 120_000,
        maxLeaseDurationMs: 12 * 3600 * second,
        tags: {},
      });
    });

    it("fills unset fields with defaults", async () => {
      const info = await h.broker.createQueue("q", { visibilityTimeoutMs: 5000, maxInFlight: 3 });
      expect(info.config).toEqual({ ...defaultQueueConfig, visibilityTimeoutMs: 5000, maxInFlight: 3 });
    });

    it("returns the existing queue, unchanged, when created again with the same configuration", async () => {
      const first = await h.broker.createQueue("q", { delayMs: 2000 });
      await sendText(h, "q", "kept");
      h.clock.advance(10_000);
      const again = await h.broker.createQueue("q", { ...defaultQueueConfig, fifo: false, delayMs: 2000 });
      expect(again.createTime).toBe(first.createTime);
      expect(again.config).toEqual(first.config);
      expect(again.counts.visible).toBe(1);
    });

    it("treats an explicit default value as the same configuration as an unset one", async () => {
      await h.broker.createQueue("q");
      await expect(h.broker.createQueue("q", { visibilityTimeoutMs: 30_000 })).resolves.toMatchObject({ name: "q" });
    });

    it("fails QUEUE_ALREADY_EXISTS for the same name with another configuration, keeping the first", async () => {
      await h.broker.createQueue("q", { visibilityTimeoutMs: 5000 });
      const error = await expectFailure(
        () => h.broker.createQueue("q", { visibilityTimeoutMs: 6000 }),
        "QUEUE_ALREADY_EXISTS",
      );
      expect(error.code).toBe(Code.ALREADY_EXISTS);
      await expectFailure(() => h.broker.createQueue("q"), "QUEUE_ALREADY_EXISTS");
      expect(h.broker.getQueue("q").config.visibilityTimeoutMs).toBe(5000);
    });

    it("writes one queue for concurrent creates of the same name", async () => {
      const [a, b] = await Promise.all([h.broker.createQueue("q"), h.broker.createQueue("q")]);
      expect(a.createTime).toBe(b.createTime);
      expect(h.broker.listQueues().queues.map((queue) => queue.name)).toEqual(["q"]);
    });

    it("lets one of two concurrent creates with different configurations win, failing the other", async () => {
      const results = await Promise.allSettled([
        h.broker.createQueue("q", { maxInFlight: 1 }),
        h.broker.createQueue("q", { maxInFlight: 2 }),
      ]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected"]);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ reason: "QUEUE_ALREADY_EXISTS" });
      expect(h.broker.getQueue("q").config.maxInFlight).toBe(1);
    });

    it.each([
      ["empty", ""],
      ["81 characters", "a".repeat(81)],
      ["a space", "bad name"],
      ["a slash", "a/b"],
      ["a dot", "a.b"],
      ["a non-ASCII letter", "café"],
    ])("rejects a name with %s as INVALID_ARGUMENT on field name", async (_, name) => {
      const error = await expectFailure(() => h.broker.createQueue(name), "INVALID_ARGUMENT", "name");
      expect(error.code).toBe(Code.INVALID_ARGUMENT);
      expect(h.broker.listQueues().queues).toEqual([]);
    });

    it("accepts names of 1 and 80 characters of letters, digits, _ and -", async () => {
      await h.broker.createQueue("a");
      await h.broker.createQueue(`${"Az09_-".repeat(13)}xy`);
      expect(h.broker.listQueues().queues.map((queue) => queue.name.length)).toEqual([80, 1]);
    });
  });

  describe("configuration bounds", () => {
    const outOfBounds: [keyof QueueConfig, number, string][] = [
      ["retentionMs", 60 * second - 1, "config.retention"],
      ["retentionMs", 14 * day + 1, "config.retention"],
      ["maxMessageBytes", 1023, "config.max_message_bytes"],
      ["maxMessageBytes", 1_048_577, "config.max_message_bytes"],
      ["receiveWaitTimeMs", -1, "config.receive_wait_time"],
      ["receiveWaitTimeMs", 20 * second + 1, "config.receive_wait_time"],
      ["maxInFlight", 0, "config.max_in_flight"],
      ["maxInFlight", 1_000_001, "config.max_in_flight"],
      ["maxLeaseDurationMs", 999, "config.max_lease_duration"],
      ["maxLeaseDurationMs", 7 * day + 1, "config.max_lease_duration"],
      ["visibilityTimeoutMs", -1, "config.visibility_timeout"],
      ["visibilityTimeoutMs", 12 * 3600 * second + 1, "config.visibility_timeout"],
      ["visibilityTimeoutMs", 1.5, "config.visibility_timeout"],
      ["delayMs", -1, "config.delay"],
      ["delayMs", 4 * day + 1, "config.delay"],
      ["maxInFlight", Number.NaN, "config.max_in_flight"],
    ];

    it.each(outOfBounds)("rejects %s = %d as INVALID_ARGUMENT on field %s", async (key, value, field) => {
      await expectFailure(() => h.broker.createQueue("q", { [key]: value }), "INVALID_ARGUMENT", field);
      await expectFailure(() => h.broker.getQueue("q"), "QUEUE_NOT_FOUND");
    });

    it("bounds visibility_timeout by the queue's own max_lease_duration", async () => {
      await expectFailure(
        () => h.broker.createQueue("q", { maxLeaseDurationMs: 10_000, visibilityTimeoutMs: 10_001 }),
        "INVALID_ARGUMENT",
        "config.visibility_timeout",
      );
      await h.broker.createQueue("q", { maxLeaseDurationMs: 10_000, visibilityTimeoutMs: 10_000 });
    });

    it("bounds delay by the queue's own retention", async () => {
      await expectFailure(
        () => h.broker.createQueue("q", { retentionMs: 60_000, delayMs: 60_001 }),
        "INVALID_ARGUMENT",
        "config.delay",
      );
      await h.broker.createQueue("q", { retentionMs: 60_000, delayMs: 60_000 });
    });

    it("accepts every field at its lower bound", async () => {
      const lowest: QueueLimits = {
        visibilityTimeoutMs: 0,
        delayMs: 0,
        retentionMs: 60 * second,
        maxMessageBytes: 1024,
        receiveWaitTimeMs: 0,
        maxInFlight: 1,
        maxLeaseDurationMs: 1 * second,
      };
      expect((await h.broker.createQueue("q", lowest)).config).toEqual({ ...lowest, tags: {} });
    });

    it("accepts every field at its upper bound", async () => {
      const highest: QueueLimits = {
        visibilityTimeoutMs: 7 * day,
        delayMs: 14 * day,
        retentionMs: 14 * day,
        maxMessageBytes: 1_048_576,
        receiveWaitTimeMs: 20 * second,
        maxInFlight: 1_000_000,
        maxLeaseDurationMs: 7 * day,
      };
      expect((await h.broker.createQueue("q", highest)).config).toEqual({ ...highest, tags: {} });
    });
  });

  describe("updateQueue", () => {
    it("replaces the whole configuration: fields left out go back to their defaults", async () => {
      await h.broker.createQueue("q", { visibilityTimeoutMs: 5000, maxInFlight: 10 });
      const updated = await h.broker.updateQueue("q", { delayMs: 1000 });
      expect(updated.config).toEqual({ ...defaultQueueConfig, delayMs: 1000 });
      expect(h.broker.getQueue("q").config).toEqual({ ...defaultQueueConfig, delayMs: 1000 });
    });

    it("keeps the queue's messages and creation time", async () => {
      const created = await h.broker.createQueue("q");
      await sendText(h, "q", "kept");
      h.clock.advance(1000);
      const updated = await h.broker.updateQueue("q", { visibilityTimeoutMs: 1000 });
      expect(updated.createTime).toBe(created.createTime);
      expect(updated.counts.visible).toBe(1);
      expect(text(await receiveOne(h, "q"))).toBe("kept");
    });

    it("applies the new configuration to the next receive", async () => {
      await h.broker.createQueue("q", { visibilityTimeoutMs: 5000 });
      await h.broker.updateQueue("q", { visibilityTimeoutMs: 1000 });
      await sendText(h, "q", "m");
      expect((await receiveOne(h, "q")).leaseDeadline).toBe(h.clock.now() + 1000);
    });

    it("leaves the deadlines of leases already issued alone", async () => {
      await h.broker.createQueue("q", { visibilityTimeoutMs: 10_000 });
      await sendText(h, "q", "m");
      const delivery = await receiveOne(h, "q");
      await h.broker.updateQueue("q", { visibilityTimeoutMs: 1000 });
      h.clock.advance(9999);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
      h.clock.advance(1);
      expect((await receiveOne(h, "q")).messageId).toBe(delivery.messageId);
    });

    it("rejects a bad configuration and keeps the old one", async () => {
      await h.broker.createQueue("q", { maxInFlight: 5 });
      await expectFailure(
        () => h.broker.updateQueue("q", { maxInFlight: 0 }),
        "INVALID_ARGUMENT",
        "config.max_in_flight",
      );
      expect(h.broker.getQueue("q").config.maxInFlight).toBe(5);
    });

    it("fails QUEUE_NOT_FOUND for an unknown queue, creating nothing", async () => {
      await expectFailure(() => h.broker.updateQueue("nope", {}), "QUEUE_NOT_FOUND");
      expect(h.broker.listQueues().queues).toEqual([]);
    });
  });

  describe("getQueue and unknown queues", () => {
    it("fails QUEUE_NOT_FOUND with code NOT_FOUND for a queue that does not exist", async () => {
      const error = await expectFailure(() => h.broker.getQueue("nope"), "QUEUE_NOT_FOUND");
      expect(error.code).toBe(Code.NOT_FOUND);
    });

    it("fails QUEUE_NOT_FOUND for every message operation on an unknown queue", async () => {
      await expectFailure(() => sendText(h, "nope", "m"), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.receive("nope"), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.delete("nope", "x"), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.purgeQueue("nope"), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.deleteQueue("nope"), "QUEUE_NOT_FOUND");
    });

    it("names the field of a bad queue name: name for admin calls, queue for message calls", async () => {
      await expectFailure(() => h.broker.getQueue("bad name"), "INVALID_ARGUMENT", "name");
      await expectFailure(() => h.broker.purgeQueue("bad name"), "INVALID_ARGUMENT", "name");
      await expectFailure(() => sendText(h, "bad name", "m"), "INVALID_ARGUMENT", "queue");
      await expectFailure(() => h.broker.receive("bad name"), "INVALID_ARGUMENT", "queue");
    });
  });

  describe("listQueues", () => {
    beforeEach(async () => {
      for (const name of ["beta", "alpha", "alpine", "gamma", "alps"]) await createQueue(h, name);
    });

    const names = (page: { queues: { name: string }[] }): string[] => page.queues.map((queue) => queue.name);

    it("lists every queue in name order with no next page token", () => {
      const page = h.broker.listQueues();
      expect(names(page)).toEqual(["alpha", "alpine", "alps", "beta", "gamma"]);
      expect(page.nextPageToken).toBe("");
    });

    it("pages through the queues with page tokens", () => {
      const first = h.broker.listQueues("", 2);
      expect(names(first)).toEqual(["alpha", "alpine"]);
      expect(first.nextPageToken).not.toBe("");
      const secondPage = h.broker.listQueues("", 2, first.nextPageToken);
      expect(names(secondPage)).toEqual(["alps", "beta"]);
      const last = h.broker.listQueues("", 2, secondPage.nextPageToken);
      expect(names(last)).toEqual(["gamma"]);
      expect(last.nextPageToken).toBe("");
    });

    it("ends with an empty token when the last page is exactly full", () => {
      const page = h.broker.listQueues("", 5);
      expect(names(page)).toHaveLength(5);
      expect(page.nextPageToken).toBe("");
    });

    it("filters by prefix, also across pages", () => {
      expect(names(h.broker.listQueues("alp"))).toEqual(["alpha", "alpine", "alps"]);
      const first = h.broker.listQueues("alp", 2);
      expect(names(first)).toEqual(["alpha", "alpine"]);
      expect(names(h.broker.listQueues("alp", 2, first.nextPageToken))).toEqual(["alps"]);
      expect(names(h.broker.listQueues("zzz"))).toEqual([]);
    });

    it("continues after the last name seen even if that queue was deleted meanwhile", async () => {
      const first = h.broker.listQueues("", 2);
      await h.broker.deleteQueue("alpine");
      expect(names(h.broker.listQueues("", 2, first.nextPageToken))).toEqual(["alps", "beta"]);
    });

    it.each(["garbage", "YWZ0ZXI", "not a token!"])(
      "rejects page token %j as INVALID_ARGUMENT on page_token",
      async (token) => {
        await expectFailure(() => h.broker.listQueues("", 2, token), "INVALID_ARGUMENT", "page_token");
      },
    );

    it.each([-1, 1001, 2.5])("rejects page size %d as INVALID_ARGUMENT on page_size", async (size) => {
      await expectFailure(() => h.broker.listQueues("", size), "INVALID_ARGUMENT", "page_size");
    });

    it("accepts page size 1000", () => {
      expect(names(h.broker.listQueues("", 1000))).toHaveLength(5);
    });
  });

  describe("deleteQueue", () => {
    it("removes the queue and its messages; a queue recreated under the name starts empty", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "visible");
      await sendText(h, "q", "delayed", { delayMs: 5000 });
      await sendText(h, "q", "in flight");
      await receiveOne(h, "q");
      await h.broker.deleteQueue("q");
      await expectFailure(() => h.broker.getQueue("q"), "QUEUE_NOT_FOUND");
      expect(h.broker.listQueues().queues).toEqual([]);

      await createQueue(h, "q");
      h.clock.advance(60_000);
      await h.broker.runMaintenance();
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      expect(await h.broker.receive("q", { maxMessages: 10 })).toEqual([]);
    });

    it("leaves other queues alone", async () => {
      await createQueue(h, "a");
      await createQueue(h, "b");
      await sendText(h, "b", "kept");
      await h.broker.deleteQueue("a");
      expect(text(await receiveOne(h, "b"))).toBe("kept");
    });
  });

  describe("purgeQueue", () => {
    it("removes visible, in-flight and delayed messages and returns how many", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "in flight");
      await sendText(h, "q", "visible");
      await sendText(h, "q", "delayed", { delayMs: 5000 });
      await receiveOne(h, "q");
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 1, delayed: 1 });

      expect(await h.broker.purgeQueue("q")).toBe(3);
      expect(h.broker.getQueue("q").counts).toEqual({ visible: 0, inFlight: 0, delayed: 0, oldestSendTime: undefined });
      h.clock.advance(60_000);
      await h.broker.runMaintenance();
      expect(await h.broker.receive("q", { maxMessages: 10 })).toEqual([]);
    });

    it("returns 0 for an empty queue", async () => {
      await createQueue(h, "q");
      expect(await h.broker.purgeQueue("q")).toBe(0);
    });

    it("keeps the queue's configuration and lets it take new messages", async () => {
      await createQueue(h, "q", { visibilityTimeoutMs: 7000 });
      await sendText(h, "q", "old");
      await h.broker.purgeQueue("q");
      expect(h.broker.getQueue("q").config.visibilityTimeoutMs).toBe(7000);
      await sendText(h, "q", "new");
      const delivery = await receiveOne(h, "q");
      expect(text(delivery)).toBe("new");
      expect(delivery.leaseDeadline).toBe(h.clock.now() + 7000);
    });

    it("makes a receipt handle of a purged message name a message that is gone", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "m");
      const { receiptHandle } = await receiveOne(h, "q");
      await h.broker.purgeQueue("q");
      await expectFailure(() => h.broker.changeVisibility("q", receiptHandle, 1000), "MESSAGE_NOT_FOUND");
      await expect(h.broker.delete("q", receiptHandle)).resolves.toBe("no-longer-held");
    });
  });

  describe("stats", () => {
    it("counts visible, in-flight and delayed messages exactly as time passes", async () => {
      await createQueue(h, "q", { visibilityTimeoutMs: 10_000 });
      await sendText(h, "q", "a");
      await sendText(h, "q", "b");
      await sendText(h, "q", "c", { delayMs: 5000 });
      await receiveOne(h, "q");
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 1, delayed: 1 });

      h.clock.advance(5000);
      expect(counts(h, "q")).toEqual({ visible: 2, inFlight: 1, delayed: 0 });
      h.clock.advance(5000);
      expect(counts(h, "q")).toEqual({ visible: 3, inFlight: 0, delayed: 0 });
    });

    it("reports the age of the oldest message by send time, undefined when empty", async () => {
      await createQueue(h, "q");
      expect(h.broker.getQueue("q").oldestMessageAgeMs).toBeUndefined();
      const sentAt = h.clock.now();
      await sendText(h, "q", "first");
      h.clock.advance(1500);
      await sendText(h, "q", "second");
      h.clock.advance(2500);
      const info = h.broker.getQueue("q");
      expect(info.oldestMessageAgeMs).toBe(4000);
      expect(info.counts.oldestSendTime).toBe(sentAt);

      const first = await receiveOne(h, "q");
      await h.broker.delete("q", first.receiptHandle);
      expect(h.broker.getQueue("q").oldestMessageAgeMs).toBe(2500);
    });

    it("counts in-flight and delayed messages in the oldest age", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "delayed", { delayMs: 60_000 });
      h.clock.advance(3000);
      expect(h.broker.getQueue("q").oldestMessageAgeMs).toBe(3000);
    });
  });

  // Regression: admin operations on one name used to build their records from
  // the same stale state, and the last write won on disk.
  describe("concurrent admin operations on one queue", () => {
    it("a purge and an update at once keep messages sent after them across a restart", async () => {
      await createQueue(h, "q");
      await Promise.all([h.broker.purgeQueue("q"), h.broker.updateQueue("q", { visibilityTimeoutMs: 5 * second })]);
      await sendText(h, "q", "after");
      await h.restart();
      expect(counts(h, "q").visible).toBe(1);
      expect(h.broker.getQueue("q").config.visibilityTimeoutMs).toBe(5 * second);
    });

    it("an update and a purge at once keep the update across a restart", async () => {
      await createQueue(h, "q");
      await Promise.all([h.broker.updateQueue("q", { visibilityTimeoutMs: 5 * second }), h.broker.purgeQueue("q")]);
      await h.restart();
      expect(h.broker.getQueue("q").config.visibilityTimeoutMs).toBe(5 * second);
    });

    it("a purge or update behind a delete fails, and the queue stays deleted across a restart", async () => {
      await createQueue(h, "q");
      const deleted = h.broker.deleteQueue("q");
      const purge = expectFailure(() => h.broker.purgeQueue("q"), "QUEUE_NOT_FOUND");
      const update = expectFailure(() => h.broker.updateQueue("q", {}), "QUEUE_NOT_FOUND");
      await Promise.all([deleted, purge, update]);
      await h.restart();
      expect(h.broker.listQueues().queues).toEqual([]);
    });

    it("a create behind a delete makes a new queue", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "old");
      await Promise.all([h.broker.deleteQueue("q"), h.broker.createQueue("q")]);
      expect(h.broker.listQueues().queues.map((queue) => queue.name)).toEqual(["q"]);
      expect(counts(h, "q").visible).toBe(0);
      await h.restart();
      expect(h.broker.listQueues().queues.map((queue) => queue.name)).toEqual(["q"]);
    });
  });
});
