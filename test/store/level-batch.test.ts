// The one call of abstract-level's private `_batch` (src/store/level-batch.ts):
// these fail if classic-level changes that contract underneath, rather than
// writes silently going nowhere (abstract-level's own `_batch` is a no-op).
import { ClassicLevel } from "classic-level";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ClassicLevelStore, type Durability } from "../../src/store/classic-level-store.js";
import { createLevelDatabase, writeLevelBatch, type LevelDatabase } from "../../src/store/level-batch.js";
import { makeTempDir } from "../support/temp-dir.js";
import { queueRecord } from "./store-fixtures.js";

type Writable = { _batch: (...args: unknown[]) => Promise<void> };

describe("writeLevelBatch", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-level-batch-");
  });
  afterEach(async () => {
    await dir.remove();
  });

  it("relies on a _batch that classic-level itself implements", () => {
    const own = (ClassicLevel.prototype as unknown as Writable)._batch;
    const inherited = (Object.getPrototypeOf(ClassicLevel.prototype) as Writable)._batch;
    expect(Object.hasOwn(ClassicLevel.prototype, "_batch")).toBe(true);
    expect(typeof own).toBe("function");
    expect(own).not.toBe(inherited);
  });

  it("writes puts and deletes that the public API reads back, byte for byte, without the public batch()", async () => {
    const db = createLevelDatabase(dir.path);
    await db.open();
    try {
      const publicBatch = vi.spyOn(db, "batch");
      await db.put(Buffer.from("gone"), Buffer.from("x"));
      const binary = Buffer.from([0, 1, 254, 255]);
      await writeLevelBatch(
        db,
        [
          { type: "put", key: Buffer.from([0x03, 0, 0xff]), value: binary },
          { type: "put", key: Buffer.from("text"), value: Buffer.from("héllo") },
          { type: "del", key: Buffer.from("gone") },
        ],
        false,
      );
      const [first, second, deleted] = await db.getMany([Buffer.from([0x03, 0, 0xff]), Buffer.from("text"), Buffer.from("gone")]);
      expect(Buffer.isBuffer(first)).toBe(true);
      expect(first!.equals(binary)).toBe(true);
      expect(second!.toString("utf8")).toBe("héllo");
      expect(deleted).toBeUndefined();
      expect(publicBatch).not.toHaveBeenCalled();
    } finally {
      await db.close();
    }
  });

  it("refuses a closed database before the native side sees it", async () => {
    const db = createLevelDatabase(dir.path);
    await db.open();
    await db.close();
    const privateBatch = vi.spyOn(db as unknown as Writable, "_batch");
    await expect(writeLevelBatch(db, [{ type: "del", key: Buffer.from("k") }], true)).rejects.toThrow(/not open/);
    expect(privateBatch).not.toHaveBeenCalled();
  });

  it.each([
    ["fsync", true],
    ["os", false],
  ] as const)("is the store's only write path: in %s durability every commit goes through _batch with sync %s", async (durability: Durability, sync) => {
    const databases: LevelDatabase[] = [];
    const store = await ClassicLevelStore.open({
      dataDir: dir.path,
      durability,
      createDatabase: (dataDir) => {
        const db = createLevelDatabase(dataDir);
        databases.push(db);
        return db;
      },
    });
    const [db] = databases;
    const publicBatch = vi.spyOn(db!, "batch");
    const privateBatch = vi.spyOn(db as unknown as Writable, "_batch");
    try {
      await store.commit([{ kind: "putQueue", queue: queueRecord("q", 1) }, { kind: "putSequence", next: 2 }]);
      await store.probeWrite();
      expect(privateBatch).toHaveBeenCalledTimes(2);
      expect(privateBatch.mock.calls.map((call) => call[1])).toEqual([{ sync }, { sync }]);
      expect(publicBatch).not.toHaveBeenCalled();
      expect((await store.load()).queues.map((queue) => queue.record.name)).toEqual(["q"]);
    } finally {
      await store.close();
    }
  });
});
