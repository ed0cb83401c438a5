// What only the LevelDB store has: its key layout on disk, group commit, and
// how it opens a data directory. What every store must do is in the store
// contract (store-contract.ts, run by classic-level-store-contract.test.ts);
// the chained-batch write path and fsync are in level-batch.test.ts.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readBackup, type BackupEntry } from "../../src/store/backup-format.js";
import { ClassicLevelStore } from "../../src/store/classic-level-store.js";
import { contentKey } from "../../src/store/key-layout.js";
import { createLevelDatabase } from "../../src/store/level-batch.js";
import type { ScheduleEntry, StoredQueue } from "../../src/store/store.js";
import { StoreOpenError } from "../../src/store/store-open-error.js";
import { makeTempDir } from "../support/temp-dir.js";
import { openStoreFixture, putMessage, queueRecord, scheduleEntry, t0, type StoreFixture } from "./store-fixtures.js";

/** The loaded queue of that name; fails the test if it is missing. */
function loadedQueue(queues: StoredQueue[], name: string): StoredQueue {
  const queue = queues.find((candidate) => candidate.record.name === name);
  expect(queue, `queue ${name} loaded`).toBeDefined();
  return queue!;
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
    return loadedQueue(queues, name).schedule.entries();
  }

  describe("backup", () => {
    it("copies every key from the snapshot its first bytes were read at, while commits go on", async () => {
      const dataId = await createQueue();
      // More keys than one read takes: the copy spans several reads, with commits between them.
      const stored = Array.from({ length: 2500 }, (_, i) => scheduleEntry(t0 + i));
      await fx.store.commit(stored.map((entry) => putMessage(dataId, entry)));
      const backup = fx.store.backup(t0);
      const chunks: Uint8Array[] = [(await backup.next()).value!];
      // Written after the snapshot: a new message, and the deletion of one the snapshot holds.
      const late = scheduleEntry(t0 + 5000);
      const first = stored[0];
      await fx.store.commit([
        putMessage(dataId, late),
        { kind: "removeMessage", dataId, id: first!.id, readyAt: first!.readyAt, hasCheckpoint: false },
      ]);
      for await (const chunk of backup) chunks.push(chunk);
      async function* replay(): AsyncGenerator<Uint8Array> {
        yield* chunks;
      }
      const keys: BackupEntry[] = [];
      for await (const batch of readBackup(replay())) keys.push(...batch);
      const has = (key: Buffer): boolean => keys.some(([k]) => key.equals(k));
      expect(has(contentKey(dataId, first!.id))).toBe(true);
      expect(has(contentKey(dataId, late.id))).toBe(false);
      // Two keys a message, the queue record, the sequence and the format version.
      expect(keys.length).toBe(2 * 2500 + 3);
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

    it("writes a lingering commit and a later one in one batch, at once", async () => {
      const dataId = await createQueue();
      const before = { ...fx.store.commitStats };
      const [first, second] = [scheduleEntry(t0 + 1), scheduleEntry(t0 + 2)];
      const lingering = fx.store.commit([putMessage(dataId, first)], 60_000);
      await fx.store.commit([putMessage(dataId, second)]);
      await lingering;
      expect(fx.store.commitStats.batches - before.batches).toBe(1);
      expect(await scheduleAfterReopen()).toEqual([first, second]);
    });

    it("writes a lingering commit before it closes, rather than lose it to the closed database", async () => {
      const dataId = await createQueue();
      const entry = scheduleEntry(t0 + 1);
      const lingering = fx.store.commit([putMessage(dataId, entry)], 60_000);
      await fx.store.close();
      await expect(lingering).resolves.toBeUndefined();
      expect(await scheduleAfterReopen()).toEqual([entry]);
    });
  });

  describe("key layout", () => {
    it("writes the keys src/store/key-layout.ts documents, byte for byte", async () => {
      const id = "0123456789abcdef0123456789abcdef";
      const entry = scheduleEntry(2 ** 32 + 5, { id, hasCheckpoint: true });
      await fx.store.load();
      await fx.store.commit([
        { kind: "putQueue", queue: queueRecord("q", 1, 7) },
        { kind: "putSequence", next: 8 },
        putMessage(7, entry),
        { kind: "putCheckpoint", dataId: 7, id, checkpoint: Buffer.from("cp") },
        { kind: "putDeduplication", dataId: 7, record: { key: "g/dé", messageId: id, sequence: 3, expiresAt: t0 } },
      ]);
      await fx.store.close();
      const db = createLevelDatabase(fx.dataDir);
      try {
        const stored = new Map((await db.iterator().all()).map(([key, value]) => [key.toString("hex"), value]));
        const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");
        expect([...stored.keys()]).toEqual([
          `00${hex("format-version")}`,
          `00${hex("handle-key")}`,
          `00${hex("sequence")}`,
          `01${hex("q")}`,
          `0200000007${id}`,
          `03000000070000000100000005${id}`,
          `0400000007${id}`,
          `0500000007${Buffer.from("g/dé", "utf8").toString("hex")}`,
        ]);
        expect(stored.get(`00${hex("sequence")}`)!.toString("hex")).toBe("00000008");
        // The data format (format-version.ts): a u32, 1 since 0.1.0.
        expect(stored.get(`00${hex("format-version")}`)!.toString("hex")).toBe("00000001");
        expect(JSON.parse(stored.get(`01${hex("q")}`)!.toString("utf8"))).toEqual(
          JSON.parse(JSON.stringify(queueRecord("q", 1, 7))),
        );
        // Schedule values: layout version 1, then the lease state in 46 bytes.
        const scheduleValue = stored.get(`03000000070000000100000005${id}`)!;
        expect([scheduleValue[0], scheduleValue.length]).toEqual([1, 46]);
        expect(stored.get(`0400000007${id}`)!.toString()).toBe("cp");
        // Deduplication values: layout version 1, message id, sequence number, window end.
        const numbers = Buffer.alloc(16);
        numbers.writeDoubleBE(3, 0);
        numbers.writeDoubleBE(t0, 8);
        expect(stored.get(`0500000007${Buffer.from("g/dé", "utf8").toString("hex")}`)!.toString("hex")).toBe(
          `01${id}${numbers.toString("hex")}`,
        );
      } finally {
        await db.close();
      }
    });
  });
});
