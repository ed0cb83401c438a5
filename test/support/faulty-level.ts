import { createLevelDatabase, type LevelDatabase, type LevelPrivateBatch } from "../../src/store/level-batch.js";
import type { WriteFault } from "./write-fault.js";

/**
 * A `createDatabase` for ClassicLevelStore (and the server) whose databases'
 * batch writes fail while `fault` is set. They fail where a full or broken
 * disk does, in the native write under the store's group commit (its one
 * write path, src/store/level-batch.ts), so the real store's error
 * translation, fail-stop, probe write and reopen all run as in a real
 * outage. Every reopen makes a new database on the same switch, so a fault
 * outlives the storage recovery's reopens.
 */
export function faultyLevel(fault: WriteFault): (dataDir: string) => LevelDatabase {
  return (dataDir) => {
    const db = createLevelDatabase(dataDir);
    const writable = db as unknown as LevelPrivateBatch;
    const write = writable._batch.bind(db);
    writable._batch = (ops, options) => (fault.error === undefined ? write(ops, options) : Promise.reject(fault.error));
    return db;
  };
}
