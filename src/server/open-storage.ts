import type { Registry } from "prom-client";
import { ShardCluster, type ShardClusterOptions } from "../cluster/shard-cluster.js";
import type { Logger } from "../logging/logger.js";
import { createClusterMetrics } from "../metrics/cluster-metrics.js";
import { ClassicLevelStore, type ClassicLevelStoreOptions, type Durability } from "../store/classic-level-store.js";
import type { CommitObserver } from "../store/group-commit.js";
import { ShardsHeldError } from "../store/postgres/shard-ownership.js";
import type { RecoverableStore } from "../store/recoverable-store.js";

/** Where a broker in cluster mode keeps its data (docs/cluster.md). */
export type ClusterStorage = Pick<ShardClusterOptions, "urls" | "nodeId" | "shardCount" | "leaseTtlMs"> & {
  /** Where other brokers and clients reach this one; the listen address if unset. */
  readonly advertisedAddress?: string;
  /** Owns no shards: answers every call by forwarding it to the queue's owner (a gateway in front of the owners). */
  readonly routeOnly?: boolean;
};

/** Where a broker keeps its data: the embedded LevelDB directory, or a cluster's PostgreSQL. */
export interface StorageOptions {
  /** The LevelDB data directory of the embedded mode; unused with `postgres`. */
  readonly dataDir: string;
  /** Cluster mode: keep the data in PostgreSQL instead of `dataDir`. */
  readonly postgres?: ClusterStorage;
  /** The gRPC listen address: what other brokers reach this one at, unless `postgres` advertises another. */
  readonly listen: string;
  /** Aborts an open that is waiting (a standby waiting for shards other brokers hold). */
  readonly signal?: AbortSignal;
  readonly durability?: Durability;
  /** Makes the store's database handle (embedded mode), at open and at each storage-recovery reopen. */
  readonly createDatabase?: ClassicLevelStoreOptions["createDatabase"];
}

/** A broker's storage, opened: the store, and in cluster mode the cluster it writes under. */
export interface OpenedStorage {
  readonly store: RecoverableStore;
  /** Membership, balancing, routes and the inbox of cluster mode; undefined in the embedded mode. */
  readonly cluster?: ShardCluster;
}

/** The embedded LevelDB store, or with `postgres` the cluster's PostgreSQL store and its cluster (waiting while other brokers hold its shards). */
export async function openStorage(
  options: StorageOptions,
  commitObserver: CommitObserver,
  logger: Logger,
  ownershipLost: (error: unknown) => void,
  registry: Registry,
): Promise<OpenedStorage> {
  const cluster = options.postgres;
  if (cluster === undefined) {
    const store = await ClassicLevelStore.open({
      dataDir: options.dataDir,
      ...(options.durability === undefined ? {} : { durability: options.durability }),
      ...(options.createDatabase === undefined ? {} : { createDatabase: options.createDatabase }),
      commitObserver,
    });
    return { store };
  }
  let waitingFor = "";
  const clusterMetrics = createClusterMetrics(registry);
  const { routeOnly, ...storage } = cluster;
  const opened = await ShardCluster.open({
    ...storage,
    shards: routeOnly === true ? "none" : "share",
    advertisedAddress: cluster.advertisedAddress ?? options.listen,
    commitObserver,
    onWaiting(reason) {
      // One line per change of reason, not one per attempt.
      const text = reason instanceof Error ? reason.message : String(reason);
      if (text === waitingFor) return;
      waitingFor = text;
      if (reason instanceof ShardsHeldError)
        logger.info("standing by: waiting for shards that other brokers hold", { reason: text });
      else logger.warn("cannot join the cluster yet, retrying", { reason: text });
    },
    onOwnershipLost(error) {
      clusterMetrics.ownershipLost();
      ownershipLost(error);
    },
    onShardEvent(event) {
      // One line per event: the shards that changed hands at once, with the other member and why.
      logger.info(`shards ${event.kind}`, {
        shards: event.shards,
        peer: event.peer ?? null,
        reason: event.reason,
      });
      if (event.kind === "claimed" && event.reason === "takeover") clusterMetrics.tookOver(event.shards.length);
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  clusterMetrics.observe(opened.cluster);
  return opened;
}
