import type { CommitFence } from "./commit-statement.js";

/**
 * What a PostgresStore asks before each write: which shards this broker may
 * write and at which epochs, and whether it may write at all. Storage defines
 * it and the cluster's membership implements it (src/cluster/shard-membership.ts),
 * as River's driver gives SQL and its elector decides who leads.
 */
export interface ShardFence {
  /** Whether this broker serves the shard's queues now: a commit naming another shard is refused as moving. */
  serves(shard: number): boolean;
  /** The error that stopped every write (the shards were lost); undefined while this broker may write. */
  readonly lost: unknown;
  /** Throws the error that stops writes: the shards were lost, or their leases may have lapsed by now. */
  writable(): void;
  /** The shards held, each with the epoch it was claimed at; `only` narrows it to those of them held. */
  fence(only?: Iterable<number>): CommitFence;
  /** A fenced write found a shard not held, or moved on: this broker stops serving; returns the error to fail with. */
  broken(): unknown;
}
