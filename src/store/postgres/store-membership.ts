import type pg from "pg";
import type { ShardFence } from "./shard-fence.js";

/**
 * The cluster membership a PostgresStore writes under: its fence, the pool
 * of the host that takes writes, and the points of the store's life the
 * membership must follow (a load serves shards, a reopen claims them again,
 * a close gives them up). Implemented by src/cluster/shard-membership.ts.
 */
export interface StoreMembership extends ShardFence {
  /** The pool for commits and reads, on the host the member session is on; a new one after each reconnect. */
  readonly pool: pg.Pool;
  /** From now on this broker serves exactly these shards' queues: the store loaded them (none while it loads). */
  serve(shards: readonly number[]): void;
  /** After a failure: connects again to the host that takes writes now, joins and claims again; rejects with STORAGE_UNAVAILABLE. */
  reconnect(): Promise<void>;
  /** The broker reloaded from the store after a reconnect: balancing and the inbox may move shards and messages again. */
  resumed(): void;
  /** The store's last commits landed: stops renewing, gives the shards up (unless lost) and ends both sessions. */
  leave(): Promise<void>;
}
