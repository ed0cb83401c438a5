import type { MessageReading, ScheduleEntry, Store, StoredState, StoreOp } from "../store/store.js";

/**
 * The view of the Store that one load of the broker's memory writes through.
 * After a storage failure the broker revokes it and rebuilds its memory from
 * disk with a new one: work of the old memory still running (a paced
 * redrive, a dead-letter move) then fails instead of writing changes made
 * from a state the disk never held.
 */
export class RevocableStore implements Store {
  private revokedBy: unknown;
  private revoked = false;

  constructor(private readonly inner: Store) {}

  /** A new, unrevoked view of the same store, for the next load of the broker's memory. */
  renewed(): RevocableStore {
    return new RevocableStore(this.inner);
  }

  /** Refuses every later commit with `error`. */
  revoke(error: unknown): void {
    this.revoked = true;
    this.revokedBy = error;
  }

  load(): Promise<StoredState> {
    return this.inner.load();
  }

  commit(ops: readonly StoreOp[], lingerMs?: number): Promise<void> {
    return this.revoked ? Promise.reject(this.revokedBy) : this.inner.commit(ops, lingerMs);
  }

  readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    return this.inner.readMessages(dataId, messages);
  }

  dropData(dataId: number): Promise<void> {
    // A revoked memory's purge or delete never reached the disk: its old data space may still be in use.
    return this.revoked ? Promise.reject(this.revokedBy) : this.inner.dropData(dataId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
