import { createLevelDatabase, type LevelDatabase, type LevelPrivateBatching } from "../../src/store/level-batch.js";
import type { WriteFault } from "./write-fault.js";

/**
 * A `createDatabase` for ClassicLevelStore (and the server) whose databases'
 * batch writes fail while `fault` is set. They fail where a full or broken
 * disk does, in the native write of each chained batch under the store's
 * group commit (its one write path, src/store/level-batch.ts), so the real
 * store's error translation, fail-stop, probe write and reopen all run as in
 * a real outage. Every reopen makes a new database on the same switch, so a
 * fault outlives the storage recovery's reopens.
 */
export function faultyLevel(fault: WriteFault): (dataDir: string) => LevelDatabase {
  return (dataDir) => {
    const db = createLevelDatabase(dataDir);
    const batching = db as unknown as LevelPrivateBatching;
    const createBatch = batching._chainedBatch.bind(db);
    batching._chainedBatch = () => {
      const batch = createBatch();
      const write = batch._write.bind(batch);
      // Checked when the batch is written, not made: that is when a disk fails.
      batch._write = (options) => (fault.error === undefined ? write(options) : Promise.reject(fault.error));
      return batch;
    };
    return db;
  };
}
