import { Counter, Gauge, type Registry } from "prom-client";

/** What cluster mode exports: how many shards this broker serves, how often it lost them, and how many it took over. */
export interface ClusterMetrics {
  /** Reads the shards owned from the cluster from now on (0 until then: a standby owns none). */
  observe(cluster: { readonly ownedShardCount: number }): void;
  /** The broker's shards were claimed by another broker, or its leases lapsed. */
  ownershipLost(): void;
  /** This broker claimed `count` shards that another broker held and lost (it died, or its leases lapsed). */
  tookOver(count: number): void;
}

/**
 * The cluster-mode metrics, registered only by a broker started with
 * --postgres. Summing holdshelf_cluster_shards_owned over a cluster's
 * brokers gives its shard count while one of them serves.
 */
export function createClusterMetrics(registry: Registry): ClusterMetrics {
  let cluster: { readonly ownedShardCount: number } | undefined;
  new Gauge({
    name: "holdshelf_cluster_shards_owned",
    help: "Shards this broker owns and serves now; 0 on a standby and on a broker whose shards another claimed.",
    registers: [registry],
    collect() {
      this.set(cluster?.ownedShardCount ?? 0);
    },
  });
  const losses = new Counter({
    name: "holdshelf_cluster_ownership_losses_total",
    help: "Times this broker stopped serving its shards: another broker claimed them, or its leases lapsed unrenewed.",
    registers: [registry],
  });
  const takeovers = new Counter({
    name: "holdshelf_cluster_shard_takeovers_total",
    help: "Shards this broker claimed from another broker that died or let its leases lapse (not handed over).",
    registers: [registry],
  });
  return {
    tookOver(count) {
      takeovers.inc(count);
    },
    observe(observed) {
      cluster = observed;
    },
    ownershipLost() {
      losses.inc();
    },
  };
}
