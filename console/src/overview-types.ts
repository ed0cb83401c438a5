// The console API's JSON forms of the Overview and Cluster pages (issue #36),
// GET /api/overview and GET /api/cluster. Times are epoch milliseconds, rates
// messages a second.
import type { RateSeries } from "./api-types.js";

/** Message counts summed over every queue the token may see. */
export interface OverviewTotals {
  readonly queues: number;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly deadLetterDepth: number;
}

/** Cluster-wide rates per sample, aligned with t, oldest first; each point the average over one sample interval. */
export type OverviewRates = RateSeries;

/** Consumers connected now. */
export interface OverviewConsumers {
  readonly heartbeatStreams: number;
  readonly subscribeStreams: number;
}

/** One of a broker's limits (BROKER_FULL when used reaches limit). */
export interface BrokerBudget {
  readonly name: string;
  readonly used: number;
  readonly limit: number;
  readonly unit: string;
}

/** One broker's status; a member that gave none has only its node id and state ("unreachable", "unsupported" or "denied"). */
export interface BrokerStatus {
  /** null outside cluster mode. */
  readonly nodeId: string | null;
  readonly address: string | null;
  readonly version: string | null;
  readonly startedAt: number | null;
  readonly uptimeMs: number | null;
  /** "leveldb" or "postgres"; null for a member that gave no status. */
  readonly storage: string | null;
  /**
   * "serving"; "recovering" while its storage has failed (it refuses writes
   * with STORAGE_UNAVAILABLE and retries until the storage is back);
   * for a member that gave no status, why: "unreachable", "unsupported" (an
   * older release) or "denied" (it refused the token); or a state a later
   * broker names.
   */
  readonly state: string;
  readonly budgets: readonly BrokerBudget[];
  readonly heartbeatStreams: number;
  readonly subscribeStreams: number;
}

/** Why a queue is listed as needing attention. */
export type AttentionReason = "dead-lettering" | "oldest-age-growing" | "at-max-in-flight";

/** GET /api/overview. */
export interface Overview {
  readonly now: number;
  readonly sampleIntervalMs: number;
  /** The span the rate figures average over. */
  readonly rateWindowMs: number;
  readonly totals: OverviewTotals;
  readonly rates: OverviewRates;
  /** null: the token may not read them. */
  readonly consumers: OverviewConsumers | null;
  /** null: the token may not read broker status; brokersDenied says why. */
  readonly brokers: readonly BrokerStatus[] | null;
  readonly brokersDenied: string | null;
  readonly attention: readonly { readonly queue: string; readonly reasons: readonly AttentionReason[] }[];
  /** More queues exist than the totals count. */
  readonly truncated: boolean;
}

/** A broker of the cluster. */
export interface ClusterMember {
  readonly nodeId: string;
  readonly address: string;
  readonly live: boolean;
  /** How many shards it holds. */
  readonly shards: number;
  readonly lastHeartbeat: number;
}

/** Who owns a shard, and the epoch of that ownership (raised at each takeover). */
export interface ShardOwner {
  readonly shard: number;
  /** null: no broker holds it now. */
  readonly owner: string | null;
  readonly epoch: number;
}

/** A change of a shard's owner. */
export interface ShardEvent {
  readonly time: number;
  readonly kind: "claimed" | "released" | "lost";
  readonly shard: number;
  readonly nodeId: string;
  readonly peer: string | null;
  readonly reason: string;
}

/** GET /api/cluster. */
export type ClusterStatus =
  | { readonly clustered: false }
  /** The token may not read cluster status (it needs admin on every queue): `denied` says why. */
  | { readonly clustered: null; readonly denied: string }
  | {
      readonly clustered: true;
      readonly thisNode: string;
      readonly members: readonly ClusterMember[];
      readonly shards: readonly ShardOwner[];
      readonly events: readonly ShardEvent[];
    };
