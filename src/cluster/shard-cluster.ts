import { setTimeout as sleep } from "node:timers/promises";
import type { CommitObserver } from "../store/group-commit.js";
import { PostgresClusterQueues } from "../store/postgres/postgres-cluster-queues.js";
import { ensureCluster } from "../store/postgres/postgres-schema.js";
import { connectSessions, endSessions } from "../store/postgres/postgres-sessions.js";
import { PostgresStore } from "../store/postgres/postgres-store.js";
import { ShardsHeldError } from "../store/postgres/shard-ownership.js";
import { StoreOpenError } from "../store/store-open-error.js";
import type { Clock } from "../time/clock.js";
import { ClusterRoutes, type ShardRoute } from "./cluster-routes.js";
import { InboxPoller } from "./inbox-poller.js";
import { leaseClock } from "./lease-clock.js";
import { ShardBalancer } from "./shard-balancer.js";
import { ShardMembership, type ShardMembershipOptions } from "./shard-membership.js";
import type { ShardMoves } from "./shard-moves.js";
import { ShardEventLog, type ShardEvent } from "./shard-events.js";
import { readClusterStatus } from "../store/postgres/cluster-status.js";
import { postgresUnavailable } from "../store/postgres/postgres-unavailable.js";

/** How to open a broker's storage in cluster mode. */
export interface ShardClusterOptions extends Pick<ShardMembershipOptions, "urls" | "nodeId" | "onOwnershipLost"> {
  /** Told while `open` waits: for shards other brokers hold (a ShardsHeldError), or for PostgreSQL. */
  readonly onWaiting?: (reason: unknown) => void;
  /** Where other brokers and clients reach this one (host:port). */
  readonly advertisedAddress: string;
  /** Which shards it claims (ShardMembershipOptions.shards); "all" if unset. */
  readonly shards?: ShardMembershipOptions["shards"];
  /** Shards of a cluster this broker creates; an existing cluster keeps its own. */
  readonly shardCount?: number;
  /** How long a shard lease lasts without renewal (renewed every third of it). */
  readonly leaseTtlMs?: number;
  /** How long `open` waits for shards that live brokers hold; it throws ShardsHeldError after that. */
  readonly claimTimeoutMs?: number;
  /** Aborts `open` while it waits for shards (a standby told to stop). */
  readonly signal?: AbortSignal;
  readonly commitObserver?: CommitObserver;
  /** Times leases and balancing; leaseClock if unset. A standby's wait for held shards at open runs on real time. */
  readonly clock?: Clock;
  /** Told of each shard event as it is recorded (shard-events.ts): the log line and the takeover counter. */
  readonly onShardEvent?: (event: ShardEvent) => void;
}

/** The cluster as one broker sees it, for GetClusterStatus: members, shard owners, and its own shard events. */
export interface ClusterSnapshot {
  readonly nodeId: string;
  /** Members whose row is in the table, and whether they are live (member lock held, renewed within a lease). */
  readonly members: { nodeId: string; address: string; live: boolean; shards: number; lastHeartbeat: number }[];
  readonly shards: { shard: number; owner: string | undefined; epoch: number }[];
  readonly events: ShardEvent[];
}

// Four seconds: a broker whose machine died (no session to close) is taken
// over within about 6 s (the TTL, a standby's 200 ms poll, the load), yet a
// database stall must last over two renewal periods (2.7 s) to cost the shards.
/** The shard lease's TTL unless told otherwise. */
const defaultLeaseTtlMs = 4000;
// While PostgreSQL cannot be reached at start: often enough to follow a failover, rarely enough not to flood its log.
const openRetryMs = 1000;

/**
 * A broker's part in a cluster: its membership and leases
 * (shard-membership.ts), balancing (shard-balancer.ts), routes
 * (cluster-routes.ts), the inbox (inbox-poller.ts), and the queues on other
 * brokers' shards. Opened with the PostgresStore that writes under its
 * fence; closing that store leaves the cluster.
 */
export class ShardCluster {
  private readonly routes: ClusterRoutes;

  private constructor(
    private readonly membership: ShardMembership,
    private readonly balancer: ShardBalancer,
    private readonly inbox: InboxPoller,
    store: PostgresStore,
    /** The queues of the cluster on other brokers' shards, for moves and checks across shards. */
    readonly clusterQueues: PostgresClusterQueues,
    /** The secret every broker of the cluster shares (its record's handle key): what they prove themselves to each other with. */
    readonly sharedKey: Uint8Array,
  ) {
    this.routes = new ClusterRoutes(membership, store);
  }

  /**
   * Connects, creates the cluster's tables if missing, joins as a member and
   * claims its shards. Until `claimTimeoutMs` passes it waits while other
   * brokers hold the shards, and retries while PostgreSQL cannot be reached
   * or still holds a dead session of this node id: a standby rides out a
   * database failover instead of exiting. A database it must not use (a
   * StoreOpenError: another layout, a bad shard count) fails at once.
   */
  static async open(options: ShardClusterOptions): Promise<{ store: PostgresStore; cluster: ShardCluster }> {
    const giveUpAt = performance.now() + (options.claimTimeoutMs ?? Infinity);
    for (;;) {
      options.signal?.throwIfAborted();
      try {
        return await ShardCluster.openOnce(options, giveUpAt);
      } catch (error) {
        if (error instanceof StoreOpenError || error instanceof ShardsHeldError || performance.now() >= giveUpAt)
          throw error;
        options.signal?.throwIfAborted();
        options.onWaiting?.(error);
        await sleep(
          Math.min(openRetryMs, Math.max(0, giveUpAt - performance.now())),
          undefined,
          options.signal && { signal: options.signal },
        );
      }
    }
  }

  private static async openOnce(
    options: ShardClusterOptions,
    giveUpAt: number,
  ): Promise<{ store: PostgresStore; cluster: ShardCluster }> {
    const leaseTtlMs = options.leaseTtlMs ?? defaultLeaseTtlMs;
    const mode = options.shards ?? "all";
    const clock = options.clock ?? leaseClock;
    const sessions = await connectSessions(options.urls, options.nodeId, leaseTtlMs);
    try {
      const layout = await ensureCluster(sessions.member, options.shardCount);
      const membership = new ShardMembership(
        sessions,
        layout.shardCount,
        {
          urls: options.urls,
          nodeId: options.nodeId,
          shards: mode,
          leaseTtlMs,
          clock,
          onInbox: () => inbox.takeSoon(),
          events: new ShardEventLog(options.onShardEvent),
          ...(options.onWaiting === undefined ? {} : { onWaiting: options.onWaiting }),
          ...(options.onOwnershipLost === undefined ? {} : { onOwnershipLost: options.onOwnershipLost }),
        },
        options.advertisedAddress,
      );
      const store = new PostgresStore(membership, {
        shardCount: layout.shardCount,
        handleKey: layout.handleKey,
        routeOnly: mode === "none",
        ...(options.commitObserver === undefined ? {} : { commitObserver: options.commitObserver }),
      });
      const inbox = new InboxPoller(membership, store);
      const clusterQueues = new PostgresClusterQueues(
        () => membership.pool,
        (shard) => membership.serves(shard),
        (queue) => store.shardOf(queue),
      );
      const balancer = new ShardBalancer({ membership, store, inbox, clusterQueues, clock });
      membership.attach(balancer);
      membership.attach(inbox);
      await membership.join(giveUpAt, options.signal);
      return { store, cluster: new ShardCluster(membership, balancer, inbox, store, clusterQueues, layout.handleKey) };
    } catch (error) {
      await endSessions(sessions);
      throw error;
    }
  }

  /**
   * Starts balancing (a sharing or routing broker) and taking in arrivals:
   * `moves` is how the broker hears of shards and messages coming and going.
   * Resolves once the first balancing step is done.
   */
  start(moves: ShardMoves): Promise<void> {
    this.inbox.moves = moves;
    return this.balancer.start(moves);
  }

  /** Where calls on a queue go (cluster-routes.ts). */
  route(queueName: string): ShardRoute {
    return this.routes.route(queueName);
  }

  /** Where calls on a shard's queues go (cluster-routes.ts). */
  routeShard(shard: number): ShardRoute {
    return this.routes.routeShard(shard);
  }

  /** The other live brokers that hold shards now, node id → address. */
  shardOwners(): Map<string, string> {
    return this.routes.shardOwners();
  }

  /** The shards this broker owns and serves now: none once it lost them, until it claims them again. */
  get ownedShardCount(): number {
    return this.membership.ownedShardCount;
  }

  /** Records where other brokers and clients reach this one, once the listener knows its port. */
  advertise(address: string): Promise<void> {
    return this.membership.advertise(address);
  }

  /** The other live members (any mode but route-only), node id → address, as the last balancing step read them. */
  liveMembers(): Map<string, string> {
    const members = new Map(this.membership.view?.members ?? []);
    members.delete(this.membership.nodeId);
    return members;
  }

  /** Reads members and shard owners from PostgreSQL now, with this broker's shard events; STORAGE_UNAVAILABLE while PostgreSQL is not reached. */
  async snapshot(): Promise<ClusterSnapshot> {
    const status = await readClusterStatus(this.membership.pool).catch((error: unknown) => {
      throw postgresUnavailable(error, "read");
    });
    const live = this.membership.view?.members ?? new Map<string, string>();
    const now = Date.now();
    const owned = new Map<string, number>();
    const shards = (status?.shards ?? []).map((shard) => {
      // A lease run out is nobody's, as routes take it.
      const owner = shard.owner !== null && (shard.leaseLeftMs ?? 0) > 0 ? shard.owner : undefined;
      if (owner !== undefined) owned.set(owner, (owned.get(owner) ?? 0) + 1);
      return { shard: shard.shard, owner, epoch: shard.epoch };
    });
    return {
      nodeId: this.membership.nodeId,
      members: (status?.members ?? []).map((member) => ({
        nodeId: member.nodeId,
        address: member.address,
        live: live.has(member.nodeId) || member.nodeId === this.membership.nodeId,
        shards: owned.get(member.nodeId) ?? 0,
        lastHeartbeat: Math.round(now - member.heartbeatAgeMs),
      })),
      shards,
      events: this.membership.events.recent(),
    };
  }

  /** Resolves once the inbox take under way (if any) has shown what it took. */
  inboxTaken(): Promise<void> {
    return this.inbox.taken();
  }
}
