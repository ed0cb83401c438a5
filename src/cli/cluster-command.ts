import { parseArgs } from "node:util";
import pg from "pg";
import { readClusterStatus, type ClusterStatus } from "../store/postgres/cluster-status.js";
import { defaultShardCount, ensureCluster, type ClusterInfo } from "../store/postgres/postgres-schema.js";
import { connectToPrimary } from "../store/postgres/primary-connection.js";
import { FormatTooNewError, StoreOpenError } from "../store/store-open-error.js";
import { parseClusterFlags } from "./cluster-flags.js";
import { formatTooNewExitStatus } from "./exit-status.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { UsageError } from "./usage-error.js";

/** The options of `holdshelf cluster`. */
export const clusterCommandOptionTable = {
  postgres: {
    type: "string",
    value: "URL[,URL...]",
    env: "HOLDSHELF_POSTGRES",
    description: "the cluster's PostgreSQL",
  },
  shards: {
    type: "string",
    value: "N",
    shownDefault: String(defaultShardCount),
    description: "init: the shard count, fixed for the cluster's life",
  },
} as const satisfies OptionTable;

/** `holdshelf cluster init|status`: creates a cluster's tables, or shows its shards, owners, epochs and members. */
export async function clusterCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  note: (line: string) => void,
): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: parserOptions(clusterCommandOptionTable, env),
  });
  if (values.postgres === undefined)
    throw new UsageError("cluster commands need --postgres URL (or HOLDSHELF_POSTGRES)");
  const { urls } = parseClusterFlags({ postgres: values.postgres }, "")!;
  if (action !== "init" && action !== "status") throw new UsageError("cluster init|status");
  if (action === "status" && values.shards !== undefined) throw new UsageError("--shards is for cluster init");
  const asked = values.shards === undefined ? undefined : parseShardCount(values.shards);
  let client: pg.Client;
  try {
    client = new pg.Client({ connectionString: await connectToPrimary(urls) });
    await client.connect();
  } catch (error) {
    note(`holdshelf: cannot reach PostgreSQL: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  try {
    if (action === "init") {
      let cluster: ClusterInfo;
      try {
        cluster = await ensureCluster(client, asked);
      } catch (error) {
        // A database this release must not touch (a newer layout): say so without a stack.
        if (!(error instanceof StoreOpenError)) throw error;
        note(`holdshelf: ${error.message}`);
        return error instanceof FormatTooNewError ? formatTooNewExitStatus : 1;
      }
      if (asked !== undefined && cluster.shardCount !== asked) {
        note(
          `holdshelf: the cluster already exists with ${cluster.shardCount} shards; its shard count is fixed when it is created`,
        );
        return 1;
      }
      print(`cluster ready: ${cluster.shardCount} shards`);
      return 0;
    }
    const status = await readClusterStatus(client);
    if (status === undefined) {
      note("holdshelf: no cluster here yet: run holdshelf cluster init, or start a broker with --postgres");
      return 1;
    }
    for (const line of formatStatus(status)) print(line);
    return 0;
  } finally {
    await client.end();
  }
}

function parseShardCount(text: string): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || count < 1 || count > 65_536)
    throw new UsageError("--shards is a whole number from 1 to 65536");
  return count;
}

/** Members, then one line per owner with its shards and the epochs they are at, then shards nobody holds. */
export function formatStatus(status: ClusterStatus): string[] {
  const lines = [`shards: ${status.shardCount}`, `members: ${status.members.length}`];
  for (const member of status.members) {
    lines.push(
      `  ${member.nodeId} at ${member.address}, last heartbeat ${(member.heartbeatAgeMs / 1000).toFixed(1)} s ago`,
    );
  }
  const byOwner = new Map<string, typeof status.shards>();
  for (const shard of status.shards) {
    const live = shard.owner !== null && (shard.leaseLeftMs ?? -1) > 0;
    const key = live ? shard.owner! : "";
    byOwner.set(key, [...(byOwner.get(key) ?? []), shard]);
  }
  lines.push("owners:");
  for (const [owner, shards] of byOwner) {
    if (owner === "") continue;
    const epochs = shards.map((shard) => shard.epoch);
    const leaseLeft = Math.min(...shards.map((shard) => shard.leaseLeftMs ?? 0)) / 1000;
    lines.push(
      `  ${owner}: ${shards.length} shards, ${sum(shards.map((shard) => shard.queues))} queues, ` +
        `epochs ${Math.min(...epochs)}-${Math.max(...epochs)}, lease ${leaseLeft.toFixed(1)} s left`,
    );
  }
  const free = byOwner.get("") ?? [];
  lines.push(
    `unowned: ${free.length} shards${free.length === 0 ? "" : `, ${sum(free.map((shard) => shard.queues))} queues`}`,
  );
  return lines;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
