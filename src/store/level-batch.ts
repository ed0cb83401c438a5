import { ClassicLevel } from "classic-level";

/** The database under a ClassicLevelStore: keys and values are Buffers. */
export type LevelDatabase = ClassicLevel<Buffer, Buffer>;

/** One write of a batch, keys and values already bytes. */
export type LevelBatchOp = { type: "put"; key: Buffer; value: Buffer } | { type: "del"; key: Buffer };

/** abstract-level's private write contract, which classic-level implements (tests wrap it to fail writes). */
export type LevelPrivateBatch = { _batch(ops: LevelBatchOp[], options: { sync: boolean }): Promise<void> };

/** A new, unopened database in `dataDir`, with Buffer keys and values: the store's default `createDatabase`. */
export function createLevelDatabase(dataDir: string): LevelDatabase {
  return new ClassicLevel(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
}

/**
 * Writes one batch atomically through classic-level's implementation of
 * abstract-level's private `_batch` contract: the one place that calls it.
 * The public `batch()` clones every operation and runs its encodings and
 * hooks, about a fifth of the broker's CPU under a batched pipeline (commit
 * f437c22); our keys and values are Buffers already, and there are no hooks.
 * Skipping it skips its open check too, so that is made here: the native side
 * must never see a closed database. test/store/level-batch.test.ts fails if
 * classic-level changes this contract underneath.
 */
export function writeLevelBatch(db: LevelDatabase, ops: LevelBatchOp[], sync: boolean): Promise<void> {
  if (db.status !== "open") {
    return Promise.reject(new Error(`Database is not open: cannot write (status ${db.status})`));
  }
  return (db as unknown as LevelPrivateBatch)._batch(ops, { sync });
}
