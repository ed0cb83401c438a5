import { ClassicLevel, type ChainedBatch } from "classic-level";

/** The database under a ClassicLevelStore: keys and values are Buffers. */
export type LevelDatabase = ClassicLevel<Buffer, Buffer>;

/** One write of a batch, keys and values already bytes. */
export type LevelBatchOp = { type: "put"; key: Buffer; value: Buffer } | { type: "del"; key: Buffer };

/**
 * classic-level's chained batch seen through abstract-level's private
 * contract: one native leveldb WriteBatch that `_put` and `_del` fill and
 * `_write` commits (tests wrap `_write` to fail writes).
 */
export type LevelChainedBatch = ChainedBatch<LevelDatabase, Buffer, Buffer> & {
  _put(key: Buffer, value: Buffer): void;
  _del(key: Buffer): void;
  _write(options: { sync: boolean }): Promise<void>;
};

/** The database's private factory of chained batches, which classic-level implements. */
export type LevelPrivateBatching = { _chainedBatch(): LevelChainedBatch };

/** A new, unopened database in `dataDir`, with Buffer keys and values: the store's default `createDatabase`. */
export function createLevelDatabase(dataDir: string): LevelDatabase {
  return new ClassicLevel(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
}

/**
 * Writes one batch atomically, as one leveldb WriteBatch, through
 * classic-level's chained batch driven by abstract-level's private methods:
 * the one place that calls them. The public `batch()` clones every operation
 * and runs its encodings and hooks, about a fifth of the broker's CPU under a
 * batched pipeline (commit f437c22); our keys and values are Buffers already,
 * and there are no hooks. Of the private paths, `_batch` makes the native side
 * read `type`, `key` and `value` off every op object through N-API: 2,100-2,500
 * ns of the main thread an op for 600-op batches (1 KiB puts, 46 B puts and
 * deletes), where the chained batch's positional `_put`/`_del` take 950-1,450
 * ns (medians of alternating rounds on a shared 2-core machine).
 *
 * Skipping the public API skips its open check too, so that is made here:
 * writing on a closed database crashes the process (a segfault in the
 * native write). test/store/level-batch.test.ts fails if classic-level
 * changes this contract underneath.
 */
export function writeLevelBatch(db: LevelDatabase, ops: LevelBatchOp[], sync: boolean): Promise<void> {
  if (db.status !== "open") {
    return Promise.reject(new Error(`Database is not open: cannot write (status ${db.status})`));
  }
  try {
    return fillBatch(db, ops)._write({ sync });
  } catch (error) {
    // Nothing reaches LevelDB before `_write`: a batch that failed to fill is dropped unwritten.
    return Promise.reject(error);
  }
}

/** A chained batch holding `ops`, not yet written. */
function fillBatch(db: LevelDatabase, ops: LevelBatchOp[]): LevelChainedBatch {
  const batch = (db as unknown as LevelPrivateBatching)._chainedBatch();
  // Each batch attaches itself to the database until its public write() or
  // close(), which the private path never calls: attached, every batch and
  // its native WriteBatch would stay reachable until the database closes.
  // It is written within this call, and the pending native write holds off
  // the database's close, so nothing is lost by not tracking it.
  db.detachResource(batch);
  for (const op of ops) {
    if (op.type === "put") batch._put(op.key, op.value);
    else batch._del(op.key);
  }
  return batch;
}
