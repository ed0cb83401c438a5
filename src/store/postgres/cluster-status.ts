import type pg from "pg";

/** A shard as `holdshelf cluster status` shows it. */
export interface ShardStatus {
  readonly shard: number;
  readonly epoch: number;
  readonly owner: string | null;
  /** Milliseconds until its lease runs out by the database's clock; negative once it has. */
  readonly leaseLeftMs: number | null;
  readonly queues: number;
}

/** A member as `holdshelf cluster status` shows it. */
export interface MemberStatus {
  readonly nodeId: string;
  readonly address: string;
  /** Milliseconds since its last renewal, by the database's clock. */
  readonly heartbeatAgeMs: number;
}

/** What a cluster's tables say about it; undefined where no cluster was created. */
export interface ClusterStatus {
  readonly shardCount: number;
  readonly members: MemberStatus[];
  readonly shards: ShardStatus[];
}

/** Reads shards, owners, epochs and members, every time measured by the database's clock. */
export async function readClusterStatus(client: Pick<pg.ClientBase, "query">): Promise<ClusterStatus | undefined> {
  const exists = await client.query("SELECT to_regclass('holdshelf_cluster') IS NOT NULL AS exists");
  if (!exists.rows[0].exists) return undefined;
  const cluster = await client.query<{ shard_count: number }>("SELECT shard_count FROM holdshelf_cluster");
  if (cluster.rows.length === 0) return undefined;
  const members = await client.query<{ node_id: string; address: string; age_ms: number }>(
    `SELECT node_id, address, extract(epoch FROM now() - heartbeat_at) * 1000 AS age_ms
     FROM holdshelf_members ORDER BY node_id`,
  );
  const shards = await client.query<{
    shard: number;
    epoch: string;
    owner: string | null;
    left_ms: number | null;
    queues: string;
  }>(
    `SELECT s.shard, s.epoch, s.owner, extract(epoch FROM s.expires_at - now()) * 1000 AS left_ms,
       (SELECT count(*) FROM holdshelf_queues q WHERE q.shard = s.shard) AS queues
     FROM holdshelf_shards s ORDER BY s.shard`,
  );
  return {
    shardCount: cluster.rows[0]!.shard_count,
    members: members.rows.map((row) => ({
      nodeId: row.node_id,
      address: row.address,
      heartbeatAgeMs: Number(row.age_ms),
    })),
    shards: shards.rows.map((row) => ({
      shard: row.shard,
      epoch: Number(row.epoch),
      owner: row.owner,
      leaseLeftMs: row.left_ms === null ? null : Number(row.left_ms),
      queues: Number(row.queues),
    })),
  };
}
