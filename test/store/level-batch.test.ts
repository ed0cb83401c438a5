// The one use of classic-level's private chained batch (src/store/level-batch.ts):
// these fail if classic-level changes that contract underneath, rather than
// writes silently going nowhere (abstract-level's own `_put`, `_del` and
// `_write` are no-ops), and guard what the private path must do by itself:
// the open check, detaching the batch, rejecting rather than throwing.
import { ClassicLevel } from "classic-level";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { ClassicLevelStore, type Durability } from "../../src/store/classic-level-store.js";
import {
  createLevelDatabase,
  writeLevelBatch,
  type LevelBatchOp,
  type LevelChainedBatch,
  type LevelDatabase,
  type LevelPrivateBatching,
} from "../../src/store/level-batch.js";
import { makeTempDir } from "../support/temp-dir.js";
import { queueRecord } from "./store-fixtures.js";

/** The chained batches a database makes from now on, each with a spy on its native write. */
interface BatchSpy {
  readonly created: MockInstance<LevelPrivateBatching["_chainedBatch"]>;
  readonly batches: LevelChainedBatch[];
  readonly writes: MockInstance<LevelChainedBatch["_write"]>[];
}

function spyOnBatches(db: LevelDatabase, prepare: (batch: LevelChainedBatch) => void = () => undefined): BatchSpy {
  const batching = db as unknown as LevelPrivateBatching;
  const createBatch = batching._chainedBatch.bind(db);
  const batches: LevelChainedBatch[] = [];
  const writes: MockInstance<LevelChainedBatch["_write"]>[] = [];
  const created = vi.spyOn(batching, "_chainedBatch").mockImplementation(() => {
    const batch = createBatch();
    batches.push(batch);
    writes.push(vi.spyOn(batch, "_write"));
    prepare(batch);
    return batch;
  });
  return { created, batches, writes };
}

/** Fails unless `prototype` has its own `method`, not the one it inherits. */
function expectOwnOverride(prototype: object, method: string): void {
  const own: unknown = Reflect.get(prototype, method);
  const inherited: unknown = Reflect.get(Object.getPrototypeOf(prototype) as object, method);
  expect(Object.hasOwn(prototype, method), method).toBe(true);
  expect(typeof own, method).toBe("function");
  expect(own, method).not.toBe(inherited);
}

const key = (text: string) => Buffer.from(text);
const put = (text: string, value = text): LevelBatchOp => ({ type: "put", key: key(text), value: Buffer.from(value) });

describe("writeLevelBatch", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let db: LevelDatabase;
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-level-batch-");
    db = createLevelDatabase(dir.path);
    await db.open();
  });
  afterEach(async () => {
    await db.close();
    await dir.remove();
  });

  it("relies on a _chainedBatch, and batch _put, _del and _write, that classic-level itself implements", async () => {
    expectOwnOverride(ClassicLevel.prototype, "_chainedBatch");
    const batch = (db as unknown as LevelPrivateBatching)._chainedBatch();
    await batch.close();
    const batchPrototype = Object.getPrototypeOf(batch) as object;
    for (const method of ["_put", "_del", "_write"]) expectOwnOverride(batchPrototype, method);
  });

  it("writes puts and deletes that the public API reads back, byte for byte, without the public batch()", async () => {
    const publicBatch = vi.spyOn(db, "batch");
    await db.put(key("gone"), Buffer.from("x"));
    const binary = Buffer.from([0, 1, 254, 255]);
    await writeLevelBatch(
      db,
      [
        { type: "put", key: Buffer.from([0x03, 0, 0xff]), value: binary },
        put("text", "héllo"),
        { type: "del", key: key("gone") },
      ],
      false,
    );
    const [first, second, deleted] = await db.getMany([Buffer.from([0x03, 0, 0xff]), key("text"), key("gone")]);
    expect(Buffer.isBuffer(first)).toBe(true);
    expect(first!.equals(binary)).toBe(true);
    expect(second!.toString("utf8")).toBe("héllo");
    expect(deleted).toBeUndefined();
    expect(publicBatch).not.toHaveBeenCalled();
  });

  it("writes a whole batch as one native WriteBatch: one chained batch, one _write", async () => {
    const spy = spyOnBatches(db);
    const ops = Array.from({ length: 300 }, (_, i) => put(`k${String(i).padStart(3, "0")}`));
    await writeLevelBatch(db, ops, false);
    expect(spy.created).toHaveBeenCalledTimes(1);
    expect(spy.writes[0]).toHaveBeenCalledTimes(1);
    const stored = await db.getMany(ops.map((op) => op.key));
    expect(stored.map((value) => value?.toString())).toEqual(ops.map((op) => op.key.toString()));
  });

  it("rejects, never throws, when filling the batch throws, and writes none of it", async () => {
    const spy = spyOnBatches(db, (batch) => {
      vi.spyOn(batch, "_del").mockImplementation(() => {
        throw new Error("batch_del failed");
      });
    });
    let written: Promise<void> | undefined;
    expect(() => {
      written = writeLevelBatch(db, [put("a"), put("b"), { type: "del", key: key("c") }], true);
    }).not.toThrow();
    await expect(written).rejects.toThrow("batch_del failed");
    expect(spy.writes[0]).not.toHaveBeenCalled();
    expect(await db.getMany([key("a"), key("b")])).toEqual([undefined, undefined]);
  });

  it("leaves no batch attached to the database, so a written batch can be freed before the database closes", async () => {
    const spy = spyOnBatches(db);
    await writeLevelBatch(db, [put("a")], false);
    // The database closes the resources still attached to it.
    const closeBatch = vi.spyOn(spy.batches[0]!, "close");
    await db.close();
    expect(closeBatch).not.toHaveBeenCalled();
  });

  it("refuses a closed database before the native side sees it", async () => {
    await db.close();
    // Writing a batch on a closed database would crash the process, so a test failure stands in for it.
    const nativeSide = vi.spyOn(db as unknown as LevelPrivateBatching, "_chainedBatch").mockImplementation(() => {
      throw new Error("reached the native side of a closed database");
    });
    await expect(writeLevelBatch(db, [{ type: "del", key: key("k") }], true)).rejects.toThrow(/not open/);
    expect(nativeSide).not.toHaveBeenCalled();
  });
});

describe("ClassicLevelStore's writes", () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-level-batch-");
  });
  afterEach(async () => {
    await dir.remove();
  });

  it.each([
    ["fsync", true],
    ["os", false],
  ] as const)(
    "all go through one chained batch each: in %s durability every commit is a _write with sync %s",
    async (durability: Durability, sync) => {
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
      const arrayBatch = vi.spyOn(db as unknown as { _batch: () => Promise<void> }, "_batch");
      const spy = spyOnBatches(db!);
      try {
        await store.commit([
          { kind: "putQueue", queue: queueRecord("q", 1) },
          { kind: "putSequence", next: 2 },
        ]);
        await store.probeWrite();
        expect(spy.writes.map((write) => write.mock.calls)).toEqual([[[{ sync }]], [[{ sync }]]]);
        expect(arrayBatch).not.toHaveBeenCalled();
        expect(publicBatch).not.toHaveBeenCalled();
        expect((await store.load()).queues.map((queue) => queue.record.name)).toEqual(["q"]);
      } finally {
        await store.close();
      }
    },
  );
});
