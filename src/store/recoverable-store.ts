import type { GroupCommitStats } from "./group-commit.js";
import type { Store } from "./store.js";

/**
 * A Store the server can put under storage recovery (src/server/storage-recovery.ts):
 * after a failed write it stops taking commits until it is reopened, has
 * proved a write lands, and the broker reloaded from it.
 */
export interface RecoverableStore extends Store {
  /** The STORAGE_UNAVAILABLE error that stopped writing; undefined while writes work. */
  readonly unavailable: unknown;
  /** How many batches and commits the group commit has written. */
  readonly commitStats: GroupCommitStats;
  /**
   * The longest wait between two attempts to get storage back; unset, the
   * storage recovery's own (2 s, for a disk, whose reopen costs). An attempt
   * that only connects can be made often, so the broker serves again soon
   * after its database does (a promoted standby).
   */
  readonly maxRecoveryBackoffMs?: number;
  /** Gets storage back after a failure (reopens the database, or reconnects); rejects while it still fails. */
  reopen(): Promise<void>;
  /** Writes something that changes nothing, to prove writes land again; rejects with STORAGE_UNAVAILABLE if not. */
  probeWrite(): Promise<void>;
  /** Takes commits again once the broker rebuilt its memory from a load. */
  resumeWrites(): void;
}
