/**
 * The bench's view of a cluster's shards, read from PostgreSQL
 * (holdshelf_shards) and the brokers' /metrics: for scenario 12, which must
 * measure only once the brokers share the shards as the cluster's own
 * assignment says, put each queue on a chosen broker, and know whether any
 * shard moved while it measured.
 */
import type pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { assignShards } from "../src/cluster/shard-assignment.js";
import { shardOfQueue } from "../src/store/postgres/shard-of-queue.js";
import { scrapeBroker, requireValue } from "./broker-scrape.js";

/** A broker of the cluster, as the bench knows it. */
export interface ClusterMember {
  readonly nodeId: string;
  readonly metricsAddress: string;
}

/** Each shard's owner and epoch at one reading; the owner is undefined where no live lease holds the shard. */
export type ShardTable = readonly { readonly owner: string | undefined; readonly epoch: number }[];

const pollMs = 100;
// Balancing runs every 200 ms on each broker: once the shards sit where they
// belong, this long lets every broker's routes (read at each step) name the
// new owners, so a forwarded call finds the owner at once.
const routesSettleMs = 1_000;

/** Reads every shard's owner (while its lease runs) and epoch. */
export async function readShardTable(client: pg.ClientBase): Promise<ShardTable> {
  const { rows } = await client.query<{ owner: string | null; epoch: string }>(
    "SELECT CASE WHEN expires_at > now() THEN owner END AS owner, epoch FROM holdshelf_shards ORDER BY shard",
  );
  return rows.map((row) => ({ owner: row.owner ?? undefined, epoch: Number(row.epoch) }));
}

/** How many shards changed owner or epoch (a claim) between two readings. */
export function shardsMoved(before: ShardTable, after: ShardTable): number {
  return after.filter((shard, index) => shard.owner !== before[index]?.owner || shard.epoch !== before[index]?.epoch)
    .length;
}

/**
 * Waits until the members hold the shards as assignShards gives them over
 * their node ids (each shard under a live lease of its assigned member), and
 * each member serves as many as that gives it; then lets the routes settle.
 * Resolves with the assignment; throws after `timeoutMs`, saying who held what.
 */
export async function waitForAssignedShards(
  client: pg.ClientBase,
  members: readonly ClusterMember[],
  timeoutMs: number,
): Promise<string[]> {
  const assigned = assignShards(members.map((member) => member.nodeId).sort(), (await readShardTable(client)).length);
  const expected = members.map((member) => assigned.filter((owner) => owner === member.nodeId).length);
  const giveUpAt = performance.now() + timeoutMs;
  for (;;) {
    const table = await readShardTable(client);
    const held = table.every((shard, index) => shard.owner === assigned[index]);
    const served = await Promise.all(
      members.map(async (member) =>
        requireValue(await scrapeBroker(member.metricsAddress), "holdshelf_cluster_shards_owned"),
      ),
    );
    if (held && served.every((count, index) => count === expected[index])) break;
    if (performance.now() >= giveUpAt) {
      const owners = new Map<string, number>();
      for (const { owner } of table) owners.set(owner ?? "nobody", (owners.get(owner ?? "nobody") ?? 0) + 1);
      throw new Error(
        `the shards were not spread as assigned after ${timeoutMs / 1000} s: held ${[...owners].map(([owner, count]) => `${owner} ${count}`).join(", ")}; ` +
          `served ${members.map((member, index) => `${member.nodeId} ${served[index]} of ${expected[index]}`).join(", ")}`,
      );
    }
    await sleep(pollMs);
  }
  await sleep(routesSettleMs);
  return assigned;
}

/** The first name `<prefix><k>` (k = 0, 1, …) whose shard `assigned` gives to `nodeId`. */
export function queueNameOn(nodeId: string, assigned: readonly string[], prefix: string): string {
  if (!assigned.includes(nodeId)) throw new Error(`${nodeId} is assigned no shard`);
  for (let k = 0; ; k++) {
    const name = `${prefix}${k}`;
    if (assigned[shardOfQueue(name, assigned.length)] === nodeId) return name;
  }
}
