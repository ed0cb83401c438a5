import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import type { MessageContent, ScheduleEntry, StoredQueue } from "../../src/store/store.js";
import { StoreOpenError } from "../../src/store/store-open-error.js";
import { makeTempDir } from "../support/temp-dir.js";
import {
  content,
  openStoreFixture,
  putMessage,
  queueRecord,
  readContents,
  scheduleEntry,
  t0,
  type StoreFixture,
} from "./store-fixtures.js";

/** The loaded queue of that name; fails the test if it is missing. */
function loadedQueue(queues: StoredQueue[], name: string): StoredQueue {
  const queue = queues.find((candidate) => candidate.record.name === name);
  expect(queue, `queue ${name} loaded`).toBeDefined();
  return queue!;
}

/** Content as plain values, so that Buffer and Uint8Array bodies compare equal. */
function plain(value: MessageContent | undefined): { body: string; attributes: Record<string, string> } | undefined {
  return value === undefined ? undefined : { body: Buffer.from(value.body).toString("utf8"), attributes: { ...value.attributes } };
}

describe("ClassicLevelStore", () => {
  let fx: StoreFixture;
  beforeEach(async () => {
    fx = await openStoreFixture();
  });
  afterEach(async () => {
    await fx.dispose();
  });

  /** Creates queue "q" (queue and data id 1) and returns its data id. */
  async function createQueue(name = "q", id = 1): Promise<number> {
    await fx.store.commit([
      { kind: "putQueue", queue: queueRecord(name, id) },
      { kind: "putSequence", next: id + 1 },
    ]);
    return id;
  }

  /** Reopens the store and returns the schedule of queue `name`. */
  async function scheduleAfterReopen(name = "q"): Promise<ScheduleEntry[]> {
    const { queues } = await (await fx.reopen()).load();
    return loadedQueue(queues, name).schedule;
  }

  describe("load", () => {
    it("finds no queues, sequence 1 and a 32-byte handle key in an empty directory", async () => {
      const state = await fx.store.load();
      expect(state.queues).toEqual([]);
      expect(state.nextSequence).toBe(1);
      expect(state.handleKey).toHaveLength(32);
    });

    it("keeps the same handle key across close and reopen", async () => {
      const first = Buffer.from((await fx.store.load()).handleKey);
      const again = Buffer.from((await fx.store.load()).handleKey);
      const reopened = Buffer.from((await (await fx.reopen()).load()).handleKey);
      expect(again.equals(first)).toBe(true);
      expect(reopened.equals(first)).toBe(true);
    });

    it("makes a different handle key for each data directory", async () => {
      const first = Buffer.from((await fx.store.load()).handleKey);
      const other = await openStoreFixture();
      try {
        const second = Buffer.from((await other.store.load()).handleKey);
        expect(second.equals(first)).toBe(false);
      } finally {
        await other.dispose();
      }
    });
  });

  describe("queue records", () => {
    it("round-trips putQueue and putSequence through close and reopen", async () => {
      const record = {
        ...queueRecord("orders-é", 3, 9),
        config: { ...queueRecord("x", 1).config, visibilityTimeoutMs: 1234, maxInFlight: 7 },
      };
      await fx.store.commit([
        { kind: "putQueue", queue: record },
        { kind: "putQueue", queue: queueRecord("alpha", 1) },
        { kind: "putSequence", next: 10 },
      ]);
      const state = await (await fx.reopen()).load();
      expect(state.nextSequence).toBe(10);
      expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("alpha", 1), record]);
      expect(state.queues.map((queue) => queue.schedule)).toEqual([[], []]);
    });

    it("replaces a queue record put again under the same name", async () => {
      await createQueue("q", 1);
      await fx.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1, 2) }]);
      const state = await (await fx.reopen()).load();
      expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("q", 1, 2)]);
    });

    it("forgets a queue after removeQueue", async () => {
      await createQueue("gone", 1);
      await createQueue("kept", 2);
      await fx.store.commit([{ kind: "removeQueue", name: "gone" }]);
      const state = await (await fx.reopen()).load();
      expect(state.queues.map((queue) => queue.record.name)).toEqual(["kept"]);
      expect(state.nextSequence).toBe(3);
    });
  });

  describe("messages", () => {
    it("keeps every field of a message's state through close and reopen", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0 + 30_000, {
        leased: true,
        receiveCount: 3,
        epoch: 4,
        sendTime: t0 - 5000,
        enqueuedAt: t0 - 4000,
        firstReceiveAt: t0 - 3000,
        leaseStart: t0 + 1000,
        size: 70_000,
      });
      await fx.store.commit([putMessage(dataId, entry)]);
      expect(await scheduleAfterReopen()).toEqual([entry]);
    });

    it("loads the schedule in ready-time order, then by id", async () => {
      const dataId = await createQueue();
      const late = scheduleEntry(t0 + 5000);
      const early = scheduleEntry(t0 - 5000);
      const tieHigh = scheduleEntry(t0, { id: "f".repeat(32) });
      const tieLow = scheduleEntry(t0, { id: "0".repeat(31) + "1" });
      await fx.store.commit([late, tieHigh, early, tieLow].map((entry) => putMessage(dataId, entry)));
      const schedule = await scheduleAfterReopen();
      expect(schedule.map((entry) => entry.id)).toEqual([early.id, tieLow.id, tieHigh.id, late.id]);
    });

    it("orders ready times beyond 32 bits numerically, not by their low bits", async () => {
      const dataId = await createQueue();
      // 2^32 + 1 has smaller low 32 bits than 2^32 - 1.
      const high = scheduleEntry(2 ** 32 + 1);
      const low = scheduleEntry(2 ** 32 - 1);
      await fx.store.commit([putMessage(dataId, high), putMessage(dataId, low)]);
      expect((await scheduleAfterReopen()).map((entry) => entry.readyAt)).toEqual([2 ** 32 - 1, 2 ** 32 + 1]);
    });

    it("moves a message's index entry on reschedule, leaving one entry at the new ready time", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0);
      const other = scheduleEntry(t0 + 1000);
      await fx.store.commit([putMessage(dataId, entry), putMessage(dataId, other)]);
      const leased = { ...entry, readyAt: t0 + 2000, leased: true, receiveCount: 1, epoch: 1, leaseStart: t0, firstReceiveAt: t0 };
      await fx.store.commit([{ kind: "reschedule", dataId, fromReadyAt: t0, entry: leased }]);
      expect(await scheduleAfterReopen()).toEqual([other, leased]);
    });

    it("updates the state in place when a reschedule keeps the ready time", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0 + 1000);
      await fx.store.commit([putMessage(dataId, entry)]);
      const changed = { ...entry, leased: true, epoch: 2, receiveCount: 2 };
      await fx.store.commit([{ kind: "reschedule", dataId, fromReadyAt: entry.readyAt, entry: changed }]);
      expect(await scheduleAfterReopen()).toEqual([changed]);
    });

    it("keeps the last of several reschedules of one message in one commit", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0);
      await fx.store.commit([putMessage(dataId, entry)]);
      const first = { ...entry, readyAt: t0 + 100, epoch: 1 };
      const second = { ...entry, readyAt: t0 + 50, epoch: 2 };
      await fx.store.commit([
        { kind: "reschedule", dataId, fromReadyAt: t0, entry: first },
        { kind: "reschedule", dataId, fromReadyAt: t0 + 100, entry: second },
      ]);
      expect(await scheduleAfterReopen()).toEqual([second]);
    });

    it("removes a message's index entry and content on removeMessage", async () => {
      const dataId = await createQueue();
      const removed = scheduleEntry(t0 + 500);
      const kept = scheduleEntry(t0);
      await fx.store.commit([putMessage(dataId, removed, content("bye")), putMessage(dataId, kept, content("stay"))]);
      await fx.store.commit([{ kind: "removeMessage", dataId, id: removed.id, readyAt: removed.readyAt, hasCheckpoint: false }]);
      expect(await scheduleAfterReopen()).toEqual([kept]);
      const contents = await readContents(fx.store, dataId, [removed.id, kept.id]);
      expect(contents.map(plain)).toEqual([undefined, { body: "stay", attributes: {} }]);
    });

    it("keeps each queue's messages in its own data space", async () => {
      await createQueue("a", 1);
      await createQueue("b", 2);
      const inA = scheduleEntry(t0);
      const inB = scheduleEntry(t0);
      await fx.store.commit([putMessage(1, inA, content("A")), putMessage(2, inB, content("B"))]);
      const { queues } = await (await fx.reopen()).load();
      expect(loadedQueue(queues, "a").schedule).toEqual([inA]);
      expect(loadedQueue(queues, "b").schedule).toEqual([inB]);
      expect((await readContents(fx.store, 1, [inA.id, inB.id])).map(plain)).toEqual([
        { body: "A", attributes: {} },
        undefined,
      ]);
    });
  });

  describe("readContents", () => {
    it("returns bodies and attributes in the order asked, undefined for missing ids", async () => {
      const dataId = await createQueue();
      const plainEntry = scheduleEntry(t0);
      const unicode = scheduleEntry(t0);
      const empty = scheduleEntry(t0);
      const missing = scheduleEntry(t0).id;
      await fx.store.commit([
        putMessage(dataId, plainEntry, content("body one", { kind: "plain", "": "" })),
        putMessage(dataId, unicode, content("héllo wörld ✓ 🚀", { "ключ": "値 🎉", emoji: "👍🏽" })),
        putMessage(dataId, empty, content("", {})),
      ]);
      const contents = await readContents(await fx.reopen(), dataId, [unicode.id, missing, empty.id, plainEntry.id]);
      expect(contents.map(plain)).toEqual([
        { body: "héllo wörld ✓ 🚀", attributes: { "ключ": "値 🎉", emoji: "👍🏽" } },
        undefined,
        { body: "", attributes: {} },
        { body: "body one", attributes: { kind: "plain", "": "" } },
      ]);
      expect(contents[2]!.body).toHaveLength(0);
    });

    it("returns binary bodies byte for byte", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0);
      const body = Uint8Array.from({ length: 256 }, (_, index) => index);
      await fx.store.commit([putMessage(dataId, entry, { body, attributes: { a: "b" } })]);
      const [read] = await readContents(fx.store, dataId, [entry.id]);
      expect(Buffer.from(read!.body).equals(Buffer.from(body))).toBe(true);
    });

    it("returns undefined for every id of an unknown data space", async () => {
      expect(await readContents(fx.store, 42, [scheduleEntry(t0).id, scheduleEntry(t0).id])).toEqual([undefined, undefined]);
    });
  });

  describe("dropData", () => {
    it("removes a data space's contents and index entries, and no other", async () => {
      await createQueue("a", 1);
      await createQueue("b", 2);
      const dropped = scheduleEntry(t0);
      const kept = scheduleEntry(t0);
      await fx.store.commit([putMessage(1, dropped), putMessage(2, kept)]);
      await fx.store.dropData(1);
      expect(await readContents(fx.store, 1, [dropped.id])).toEqual([undefined]);
      const { queues } = await (await fx.reopen()).load();
      expect(loadedQueue(queues, "a").schedule).toEqual([]);
      expect(loadedQueue(queues, "b").schedule).toEqual([kept]);
      expect((await readContents(fx.store, 2, [kept.id])).map(plain)).toEqual([{ body: "hello", attributes: {} }]);
    });
  });

  describe("orphaned data", () => {
    it("is dropped by the next load when no queue record references its data id", async () => {
      await createQueue("q", 1);
      const orphan = scheduleEntry(t0);
      const live = scheduleEntry(t0);
      // The queue moved to data id 2 (a purge) before data id 1 was freed.
      await fx.store.commit([putMessage(1, orphan), putMessage(2, live), putMessage(5, scheduleEntry(t0))]);
      await fx.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1, 2) }]);
      expect(await readContents(fx.store, 1, [orphan.id])).not.toEqual([undefined]);

      const { queues } = await fx.store.load();
      expect(loadedQueue(queues, "q").schedule).toEqual([live]);
      expect(await readContents(fx.store, 1, [orphan.id])).toEqual([undefined]);
      expect((await readContents(fx.store, 2, [live.id])).map(plain)).toEqual([{ body: "hello", attributes: {} }]);

      // And the orphans' index entries are gone too: a queue pointed back at
      // data id 1 or 5 finds nothing there.
      await fx.store.commit([
        { kind: "putQueue", queue: queueRecord("back", 7, 1) },
        { kind: "putQueue", queue: queueRecord("five", 8, 5) },
      ]);
      const reloaded = await (await fx.reopen()).load();
      expect(loadedQueue(reloaded.queues, "back").schedule).toEqual([]);
      expect(loadedQueue(reloaded.queues, "five").schedule).toEqual([]);
    });

    it("includes the messages of a removed queue", async () => {
      const dataId = await createQueue("q", 1);
      const entry = scheduleEntry(t0);
      await fx.store.commit([putMessage(dataId, entry)]);
      await fx.store.commit([{ kind: "removeQueue", name: "q" }]);
      expect(await readContents(fx.store, dataId, [entry.id])).not.toEqual([undefined]);
      await fx.store.load();
      expect(await readContents(fx.store, dataId, [entry.id])).toEqual([undefined]);
    });
  });

  describe("open", () => {
    it("rejects a second open of a directory in use, saying it is in use", async () => {
      const second = ClassicLevelStore.open({ dataDir: fx.dataDir, durability: "os" });
      await expect(second).rejects.toBeInstanceOf(StoreOpenError);
      await expect(second).rejects.toThrow(/in use/);
      // The first store is unharmed.
      await createQueue();
      expect((await fx.store.load()).queues).toHaveLength(1);
    });

    it("rejects a path that is a regular file", async () => {
      const dir = await makeTempDir();
      try {
        const file = join(dir.path, "not-a-directory");
        await writeFile(file, "x");
        const opening = ClassicLevelStore.open({ dataDir: file });
        await expect(opening).rejects.toBeInstanceOf(StoreOpenError);
        await expect(opening).rejects.toThrow(file);
      } finally {
        await dir.remove();
      }
    });

    it("creates a data directory that does not exist yet", async () => {
      const dir = await makeTempDir();
      try {
        const store = await ClassicLevelStore.open({ dataDir: join(dir.path, "a", "b") });
        expect((await store.load()).nextSequence).toBe(1);
        await store.close();
      } finally {
        await dir.remove();
      }
    });
  });

  describe("commit", () => {
    it("group-commits concurrent commits into fewer batches, writing every one", async () => {
      const dataId = await createQueue();
      const before = { ...fx.store.commitStats };
      const entries = Array.from({ length: 50 }, (_, index) => scheduleEntry(t0 + index));
      await Promise.all(entries.map((entry) => fx.store.commit([putMessage(dataId, entry)])));
      const stats = fx.store.commitStats;
      expect(stats.commits - before.commits).toBe(50);
      expect(stats.batches - before.batches).toBeLessThan(50);
      expect(stats.batches - before.batches).toBeGreaterThanOrEqual(1);
      expect(await scheduleAfterReopen()).toEqual(entries);
    });

    it("rejects a commit on a closed store", async () => {
      await fx.store.close();
      await expect(fx.store.commit([{ kind: "putSequence", next: 5 }])).rejects.toThrow();
    });

    it("resolves an empty commit", async () => {
      await expect(fx.store.commit([])).resolves.toBeUndefined();
    });
  });

  describe("checkpoints", () => {
    it("reads a checkpoint with the content, survives a reopen, and keeps the flag in the index entry", async () => {
      const dataId = 1;
      const entry = scheduleEntry(t0, { hasCheckpoint: true });
      await fx.store.commit([
        putMessage(dataId, entry),
        { kind: "putCheckpoint", dataId, id: entry.id, checkpoint: Buffer.from("half way") },
      ]);
      const reopened = await fx.reopen();
      const [read] = await reopened.readMessages(dataId, [{ id: entry.id, hasCheckpoint: true }]);
      expect(Buffer.from(read!.checkpoint!).toString()).toBe("half way");
      expect(Buffer.from(read!.body).toString()).toBe("hello");
      await reopened.commit([{ kind: "putQueue", queue: queueRecord("q", dataId) }]);
      const [queue] = (await (await fx.reopen()).load()).queues;
      expect(queue!.schedule[0]!.hasCheckpoint).toBe(true);
    });

    it("removes a checkpoint with its message and with its data space", async () => {
      const entry = scheduleEntry(t0, { hasCheckpoint: true });
      const other = scheduleEntry(t0, { hasCheckpoint: true });
      await fx.store.commit([
        putMessage(1, entry),
        { kind: "putCheckpoint", dataId: 1, id: entry.id, checkpoint: Buffer.from("a") },
        putMessage(2, other),
        { kind: "putCheckpoint", dataId: 2, id: other.id, checkpoint: Buffer.from("b") },
      ]);
      await fx.store.commit([{ kind: "removeMessage", dataId: 1, id: entry.id, readyAt: entry.readyAt, hasCheckpoint: true }]);
      await fx.store.dropData(2);
      // Put the contents back: only a checkpoint left behind would show up.
      await fx.store.commit([putMessage(1, entry), putMessage(2, other)]);
      expect((await fx.store.readMessages(1, [{ id: entry.id, hasCheckpoint: true }]))[0]!.checkpoint).toBeUndefined();
      expect((await fx.store.readMessages(2, [{ id: other.id, hasCheckpoint: true }]))[0]!.checkpoint).toBeUndefined();
    });
  });
});
