// Brokers of a test cluster on one real PostgreSQL, and queue names placed
// on the broker a test wants them on.
import {
  startHoldshelfServer,
  type HoldshelfServer,
  type HoldshelfServerOptions,
} from "../../src/server/holdshelf-server.js";
import { assignShards } from "../../src/cluster/shard-assignment.js";
import { shardOfQueue } from "../../src/store/postgres/shard-of-queue.js";

/** What a test broker may change: its shards, lease and the usual server options. */
export type ClusterBrokerOptions = { shardCount?: number; leaseTtlMs?: number } & Partial<
  Omit<HoldshelfServerOptions, "postgres">
>;

/** A broker in cluster mode on `url`, on a free loopback port: 8 shards and a 1.5 s lease unless told otherwise. */
export function startClusterBroker(
  url: string,
  nodeId: string,
  options: ClusterBrokerOptions = {},
): Promise<HoldshelfServer> {
  const { shardCount = 8, leaseTtlMs = 1500, ...server } = options;
  return startHoldshelfServer({
    dataDir: "/nonexistent-in-cluster-mode",
    listen: "127.0.0.1:0",
    ...server,
    postgres: { urls: [url], nodeId, shardCount, leaseTtlMs },
  });
}

/** The first name `<prefix>-<i>` that a cluster of `members` with `shardCount` shards places on `owner`. */
export function queueOn(owner: string, members: readonly string[], prefix: string, shardCount = 8): string {
  const assigned = assignShards([...members].sort(), shardCount);
  for (let i = 0; i < 10_000; i++) {
    const name = `${prefix}-${i}`;
    if (assigned[shardOfQueue(name, shardCount)] === owner) return name;
  }
  throw new Error(`no name ${prefix}-… lands on ${owner}`);
}
