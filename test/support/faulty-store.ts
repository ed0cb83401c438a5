import { storageUnavailable } from "../../src/store/storage-unavailable.js";
import type { MessageReading, ScheduleEntry, Store, StoredState, StoreOp } from "../../src/store/store.js";
import type { WriteFault } from "./write-fault.js";

/**
 * Any Store, with commits refused while `fault` is set: with the
 * STORAGE_UNAVAILABLE error the durable store gives for that I/O error, and
 * nothing written. Unlike ClassicLevelStore it does not stay stopped after a
 * failure (that fail-stop is the durable store's own, tested through
 * faulty-level.ts); reads and drops go through.
 */
export class FaultyStore implements Store {
  constructor(
    private readonly inner: Store,
    private readonly fault: WriteFault,
  ) {}

  load(): Promise<StoredState> {
    return this.inner.load();
  }

  commit(ops: readonly StoreOp[], lingerMs?: number): Promise<void> {
    const { error } = this.fault;
    return error === undefined ? this.inner.commit(ops, lingerMs) : Promise.reject(storageUnavailable(error));
  }

  readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    return this.inner.readMessages(dataId, messages);
  }

  dropData(dataId: number): Promise<void> {
    return this.inner.dropData(dataId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
