import { Counter, Gauge, type Registry } from "prom-client";

/** What cluster mode exports: how many shards this broker serves, and how often it lost them. */
export interface ClusterMetrics {
  /** Reads the shards owned from the cluster from now on (0 until then: a standby owns none). */
  observe(cluster: { readonly ownedShardCount: number }): void;
  /** The broker's shards were claimed by another broker, or its leases lapsed. */
  ownershipLost(): void;
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
  return {
    observe(observed) {
      cluster = observed;
    },
    ownershipLost() {
      losses.inc();
    },
  };
}
