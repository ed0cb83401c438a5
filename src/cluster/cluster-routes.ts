import type { PostgresStore } from "../store/postgres/postgres-store.js";
import type { ShardMembership } from "./shard-membership.js";

/** Where calls on one queue go, as this broker sees the cluster; undefined while nobody serves it. */
export type ShardRoute =
  | { readonly kind: "local" }
  | { readonly kind: "remote"; readonly nodeId: string; readonly address: string }
  | undefined;

/**
 * Routes from the membership's last read of the cluster (every 200 ms while
 * balancing): local while this broker serves a shard, else its live owner.
 */
export class ClusterRoutes {
  constructor(
    private readonly membership: Pick<ShardMembership, "serves" | "view" | "nodeId">,
    private readonly store: Pick<PostgresStore, "shardOf">,
  ) {}

  /** Where calls on a queue go: here while this broker serves its shard, else its live owner's address; undefined while nobody serves it. */
  route(queueName: string): ShardRoute {
    return this.routeShard(this.store.shardOf(queueName));
  }

  /** Where calls on a shard's queues go (see route). */
  routeShard(shard: number): ShardRoute {
    if (this.membership.serves(shard)) return { kind: "local" };
    const view = this.membership.view;
    const owner = view?.owners[shard];
    if (view === undefined || owner === undefined || owner === this.membership.nodeId) return undefined;
    const address = view.members.get(owner);
    return address === undefined ? undefined : { kind: "remote", nodeId: owner, address };
  }

  /** The other live brokers that hold shards now, node id → address. */
  shardOwners(): Map<string, string> {
    const owners = new Map<string, string>();
    const view = this.membership.view;
    for (const owner of view?.owners ?? []) {
      if (owner === undefined || owner === this.membership.nodeId) continue;
      const address = view!.members.get(owner);
      if (address !== undefined) owners.set(owner, address);
    }
    return owners;
  }
}
