import type { ClusterQueues } from "../store/cluster-queues.js";
import type { PostgresStore } from "../store/postgres/postgres-store.js";
import { postgresUnavailable } from "../store/postgres/postgres-unavailable.js";
import { queueMoving } from "../store/postgres/queue-moving.js";
import { planShardMoves } from "./shard-assignment.js";
import type { Clock, Timer } from "../time/clock.js";
import type { InboxPoller } from "./inbox-poller.js";
import type { MembershipWork, ShardMembership } from "./shard-membership.js";
import type { ShardMoves } from "./shard-moves.js";

// How often a sharing broker reads who is live and who holds what: it bounds how long a dead
// broker's shards wait once its member lock is gone, and how stale a route can be.
const balanceIntervalMs = 200;
// Every this many balancing steps, the cluster's redrive policies are read again (for describing queues).
const policyRefreshSteps = 5;

/** What a ShardBalancer moves shards with. */
export interface ShardBalancerParts {
  readonly membership: ShardMembership;
  readonly store: Pick<PostgresStore, "loadShards" | "queuesIn" | "forgetShards" | "drain">;
  readonly inbox: Pick<InboxPoller, "takeSoon">;
  readonly clusterQueues: Pick<ClusterQueues, "refresh">;
  /** Times the steps; tests pass a fake one and call `step` themselves. */
  readonly clock: Clock;
}

/**
 * Balancing (a sharing or routing broker): every 200 ms it reads who is
 * live and who holds what, claims and loads the shards assigned to this
 * broker that nobody live holds, and hands over held shards assigned to
 * another live member (shard-assignment.ts decides which). A routing broker
 * only reads, for its routes.
 */
export class ShardBalancer implements MembershipWork {
  private timer: Timer | undefined;
  /** The step under way: a reconnect and leaving wait for it. */
  private balancing: Promise<void> = Promise.resolve();
  private steps = 0;
  private moves: ShardMoves | undefined;

  constructor(private readonly parts: ShardBalancerParts) {}

  /** Starts stepping; `moves` is how the broker hears of it. Resolves once the first step is done. */
  start(moves: ShardMoves): Promise<void> {
    this.moves = moves;
    const tick = (): void => {
      this.balancing = this.step()
        .catch(() => undefined) // a failed step is retried at the next; storage faults reach the broker through commits and renewals
        .finally(() => {
          if (this.moves === undefined) return;
          this.timer = this.parts.clock.setTimer(balanceIntervalMs, tick);
        });
    };
    tick();
    // The first step done: a lone broker serves every shard from its first call.
    return this.balancing;
  }

  /** One balancing step: read the cluster, release what is another's, claim what is this broker's, look at the inboxes. */
  async step(): Promise<void> {
    const { membership } = this.parts;
    if (membership.left || this.moves === undefined) return;
    const view = await membership.readView();
    // A broker that lost its shards (storage recovery under way) only routes until it is reconnected.
    if (membership.mode !== "share" || !membership.settled) return;
    const plan = planShardMoves(view, membership.nodeId, (shard) => membership.holds(shard));
    if (plan.release.length > 0) await this.release(plan.release);
    if (plan.claim.length > 0) await this.gain(plan.claim);
    if (this.steps++ % policyRefreshSteps === 0) await this.parts.clusterQueues.refresh();
    // The fallback for a notification missed (sent while this broker reconnected): a look at the inboxes, lock-free.
    const served = membership.servedShards();
    if (served.length > 0) {
      const { rows } = await membership.pool.query<{ waiting: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM holdshelf_inbox WHERE shard = ANY($1::int[])) AS waiting",
        [served],
      );
      if (rows[0]!.waiting) this.parts.inbox.takeSoon();
    }
  }

  /** Claims what it can of `shards`, loads their queues and hands them to the broker. */
  private async gain(shards: readonly number[]): Promise<void> {
    const { membership, store } = this.parts;
    const claimed = await membership.claimSome(shards);
    if (claimed.length === 0) return;
    // The claim extended nothing else: renewals keep the new leases from here on.
    let loaded: Awaited<ReturnType<typeof store.loadShards>>;
    try {
      loaded = await store.loadShards(claimed);
    } catch (error) {
      // Claimed but not loaded: writes to these shards would be fenced anyway; start over from storage recovery.
      return membership.loseOwnership(postgresUnavailable(error, "read"), "storage-failure");
    }
    if (membership.serveAlso(claimed)) this.moves?.gained(loaded.queues);
  }

  /**
   * Hands shards over: the broker stops serving their queues, the writes
   * already asked for land, and only then are the leases given up, so the
   * next owner loads everything this one acknowledged.
   */
  private async release(shards: readonly number[]): Promise<void> {
    const { membership, store } = this.parts;
    membership.serveNoLonger(shards);
    const names = store.queuesIn(shards);
    this.moves?.releasing(names, queueMoving());
    await store.drain().catch(() => undefined);
    if (membership.lost !== undefined) return;
    await membership.releaseSome(shards);
    store.forgetShards(shards, names);
  }

  paused(): Promise<void> {
    return this.balancing;
  }

  async stop(): Promise<void> {
    this.moves = undefined;
    this.timer?.cancel();
    await this.balancing;
  }
}
