import type { PostgresStore } from "../store/postgres/postgres-store.js";
import { queueMoving } from "../store/postgres/queue-moving.js";
import type { ClusterPeer, QueueRouter, QueueRoute } from "./queue-router.js";

const local: QueueRoute = { kind: "local" };

/**
 * Routes by the cluster's shard map as this broker's store last read it
 * (every 200 ms): local while this broker serves the queue's shard, else to
 * its live owner, else QUEUE_MOVING (nobody serves it this moment).
 */
export function shardRouter(store: Pick<PostgresStore, "route" | "shardOwners">, self: ClusterPeer): QueueRouter {
  return {
    get self() {
      return self;
    },
    route(queue) {
      const route = store.route(queue);
      if (route === undefined) return { kind: "unavailable", error: queueMoving(queue) };
      if (route.kind === "local") return local;
      return { kind: "remote", owner: { nodeId: route.nodeId, address: route.address } };
    },
    owners() {
      return [...store.shardOwners()].map(([nodeId, address]) => ({ nodeId, address }));
    },
  };
}
