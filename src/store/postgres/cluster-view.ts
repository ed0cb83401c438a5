import type pg from "pg";

/** Who is in the cluster and who holds each shard, as one read of the tables found it. */
export interface ClusterView {
  /** Live members (member lock held, heartbeat within a lease), node id → advertised address. */
  readonly members: ReadonlyMap<string, string>;
  /** Each shard's owner while its lease runs; undefined where nobody holds it. */
  readonly owners: readonly (string | undefined)[];
}

// Advisory lock space of member sessions (shard-ownership.ts takes them): (space, hashtext(node id)).
export const memberLockSpace = 0x6d656d62; // "memb"

/**
 * Reads the live members and the shard owners, lock-free: a broker asks
 * every 200 ms, and must never hold up commits or claims. A member is live
 * while its session holds its member lock (a kill -9 frees it at once) and it
 * renewed within a lease (a broker frozen by SIGSTOP keeps its session but
 * stops renewing, and must not keep shards assigned to it).
 */
export async function readClusterView(
  client: pg.ClientBase,
  selfId: string,
  leaseTtlMs: number,
  shardCount: number,
): Promise<ClusterView> {
  const members = await client.query<{ node_id: string; address: string }>(
    `SELECT node_id, address FROM holdshelf_members
     WHERE node_id = $1 OR (heartbeat_at > now() - $3 * interval '1 millisecond' AND NOT pg_try_advisory_xact_lock($2, hashtext(node_id)))`,
    [selfId, memberLockSpace, leaseTtlMs],
  );
  const shards = await client.query<{ shard: number; owner: string }>(
    "SELECT shard, owner FROM holdshelf_shards WHERE owner IS NOT NULL AND expires_at > now()",
  );
  const owners: (string | undefined)[] = new Array(shardCount).fill(undefined);
  for (const row of shards.rows) owners[row.shard] = row.owner;
  return { members: new Map(members.rows.map((row) => [row.node_id, row.address])), owners };
}
