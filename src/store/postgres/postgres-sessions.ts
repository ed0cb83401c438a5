import pg from "pg";
import { connectTimeoutMs, connectToPrimary } from "./primary-connection.js";

/** A broker's two ways into the cluster's database, both on the host that takes writes. */
export interface PostgresSessions {
  /** For commits and reads (PostgresStore). */
  readonly pool: pg.Pool;
  /** Holds the member lock and runs the membership's claims, renewals and reads (src/cluster/shard-membership.ts). */
  readonly member: pg.Client;
}

/**
 * A pool for commits and reads, and a member session (which holds the member
 * lock), on the current primary: both on the one host, found again on each
 * reconnect. Named in pg_stat_activity, so an operator sees which broker
 * holds which connection.
 */
export async function connectSessions(
  urls: readonly string[],
  nodeId: string,
  leaseTtlMs: number,
): Promise<PostgresSessions> {
  const url = await connectToPrimary(urls);
  // A statement unanswered for a lease's length (a partition, a synchronous
  // standby gone) fails, so the broker stops serving and recovers instead
  // of holding every call; keepalives find a dead server without traffic.
  // A new connection of the pool to a host that died since (no answer,
  // not even a refusal) fails as the probe's does, not after the system's
  // TCP timeout of minutes.
  const settings = {
    connectionString: url,
    keepAlive: true,
    query_timeout: Math.max(leaseTtlMs, 5000),
    connectionTimeoutMillis: connectTimeoutMs,
  };
  const pool = new pg.Pool({
    ...settings,
    max: 4,
    application_name: `holdshelf ${nodeId}`,
    // The store's statements find their rows by key (commit-statement.ts: "Why a lookup per key").
    // After autoanalyze saw a drained queue's table (pages of dead rows, one live) the planner
    // prices a key lookup as a walk of the whole index and takes a sequential scan instead:
    // turned off, a scan is its last resort. That prices a statement that must still scan (a small
    // table with no index on its condition) past jit_above_cost: JIT off, or compiling it would
    // take most of a second (a failover's load did) for statements that run in milliseconds.
    // A SET on each new connection, before the pool hands it out, rather than a startup option,
    // which a pooler in front may refuse or drop.
    onConnect: async (client) => {
      await client.query("SET enable_seqscan = off; SET jit = off");
    },
  });
  // An idle connection's error (the server restarted) surfaces on the next query instead of crashing the process.
  pool.on("error", () => undefined);
  const member = new pg.Client({ ...settings, application_name: `holdshelf member ${nodeId}` });
  member.on("error", () => undefined);
  try {
    await member.connect();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return { pool, member };
}

/** Ends both sessions; a failure to end one (it is gone already) is no error. */
export async function endSessions(sessions: PostgresSessions): Promise<void> {
  await Promise.all([sessions.pool.end().catch(() => undefined), sessions.member.end().catch(() => undefined)]);
}
