import { queueMoving } from "../store/postgres/queue-moving.js";
import type { ClusterPeer, QueueRouter, QueueRoute } from "./queue-router.js";
import type { ShardCluster } from "./shard-cluster.js";

const local: QueueRoute = { kind: "local" };

/**
 * Routes by the cluster's shard map as this broker last read it (every
 * 200 ms): local while this broker serves the queue's shard, else to its
 * live owner, else QUEUE_MOVING (nobody serves it this moment).
 */
export function shardRouter(cluster: Pick<ShardCluster, "route" | "shardOwners">, self: ClusterPeer): QueueRouter {
  return {
    get self() {
      return self;
    },
    route(queue) {
      const route = cluster.route(queue);
      if (route === undefined) return { kind: "unavailable", error: queueMoving(queue) };
      if (route.kind === "local") return local;
      return { kind: "remote", owner: { nodeId: route.nodeId, address: route.address } };
    },
    owners() {
      return [...cluster.shardOwners()].map(([nodeId, address]) => ({ nodeId, address }));
    },
  };
}
