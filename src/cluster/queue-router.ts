import type { HoldshelfError } from "../errors/holdshelf-error.js";

/** Another broker of the cluster, as calls reach it. */
export interface ClusterPeer {
  readonly nodeId: string;
  /** Where it serves gRPC (host:port), as it advertised. */
  readonly address: string;
}

/** Where calls on one queue go right now. */
export type QueueRoute =
  | { readonly kind: "local" }
  | { readonly kind: "remote"; readonly owner: ClusterPeer }
  /** Nobody serves the queue's shard this moment (it is moving): the call fails with this, and the client retries. */
  | { readonly kind: "unavailable"; readonly error: HoldshelfError };

/**
 * Which broker serves each queue, for the gRPC layer's forwarding. In the
 * embedded mode every queue is local (localRouter); in cluster mode the
 * shard map read from PostgreSQL decides (src/cluster/shard-router.ts).
 */
export interface QueueRouter {
  /** This broker, as other brokers and clients reach it (the owner hint of calls it answers itself). */
  readonly self: ClusterPeer;
  route(queue: string): QueueRoute;
  /** The other brokers that own shards now: ListQueues asks each of them for its queues. */
  owners(): readonly ClusterPeer[];
}

const local: QueueRoute = { kind: "local" };

/** The router of a broker that is the whole cluster: every queue is its own. */
export function localRouter(self: ClusterPeer): QueueRouter {
  return { self, route: () => local, owners: () => [] };
}
