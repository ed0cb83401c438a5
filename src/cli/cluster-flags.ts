import { hostname } from "node:os";
import type { ClusterStorage } from "../server/open-storage.js";
import { parseDurationFlag } from "./duration-flag.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { UsageError } from "./usage-error.js";

/** The options of cluster mode (docs/cluster.md). */
export const clusterOptionTable = {
  postgres: {
    type: "string",
    value: "URL[,URL...]",
    env: "HOLDSHELF_POSTGRES",
    description: "cluster mode: keep the queues in PostgreSQL, shared with other brokers",
  },
  "node-id": {
    type: "string",
    value: "ID",
    env: "HOLDSHELF_NODE_ID",
    shownDefault: "host name/listen address",
    description: "this broker's name in the cluster",
  },
  advertise: {
    type: "string",
    value: "HOST:PORT",
    env: "HOLDSHELF_ADVERTISE",
    description: "where the other brokers reach this one, if not at its listen address",
  },
  "shard-lease-ttl": {
    type: "string",
    value: "DURATION",
    env: "HOLDSHELF_SHARD_LEASE_TTL",
    shownDefault: "4s",
    description: "how long a silent broker keeps its shards (1s to 10m)",
  },
  "route-only": {
    type: "boolean",
    env: "HOLDSHELF_ROUTE_ONLY",
    description: "own no shards: pass every call to the broker that owns its queue",
  },
} as const satisfies OptionTable;

/** The flags of cluster mode, for parseArgs; each has an environment variable. */
export function clusterFlagOptions(env: NodeJS.ProcessEnv) {
  return parserOptions(clusterOptionTable, env);
}

/**
 * Cluster storage from the flags, or undefined without --postgres (the
 * embedded LevelDB mode). The node id defaults to host name and listen
 * address: stable across restarts, and distinct for brokers on one host.
 */
export function parseClusterFlags(
  values: {
    postgres?: string | undefined;
    "node-id"?: string | undefined;
    advertise?: string | undefined;
    "shard-lease-ttl"?: string | undefined;
    "route-only"?: boolean | undefined;
  },
  listen: string,
): ClusterStorage | undefined {
  const { postgres, advertise } = values;
  if (postgres === undefined) {
    if (
      values["node-id"] !== undefined ||
      advertise !== undefined ||
      values["shard-lease-ttl"] !== undefined ||
      values["route-only"] === true
    ) {
      throw new UsageError(
        "--node-id, --advertise, --shard-lease-ttl and --route-only are for cluster mode: add --postgres URL",
      );
    }
    return undefined;
  }
  const urls = postgres.split(",").map((url) => url.trim());
  if (urls.some((url) => url === ""))
    throw new UsageError("--postgres (HOLDSHELF_POSTGRES) is a comma-separated list of postgres:// URLs, none empty");
  urls.forEach((url, index) => {
    // The URL itself is never echoed: it may hold a password, in forms no redaction can be sure to catch.
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new UsageError(`--postgres: entry ${index + 1} is not a postgres:// URL`);
  });
  // With port 0 the listen address names no broker in particular: the process id keeps two such brokers apart.
  const nodeId = values["node-id"] ?? `${hostname()}/${listen}${listen.endsWith(":0") ? `/${process.pid}` : ""}`;
  if (nodeId === "" || nodeId.length > 200) throw new UsageError("--node-id is 1 to 200 characters");
  const ttlText = values["shard-lease-ttl"];
  const leaseTtlMs = ttlText === undefined ? undefined : parseDurationFlag(ttlText, "shard-lease-ttl");
  // Renewed every third of it: below a second, a database hiccup of a few hundred ms would cost the shards.
  if (leaseTtlMs !== undefined && (leaseTtlMs < 1000 || leaseTtlMs > 600_000)) {
    throw new UsageError("--shard-lease-ttl is between 1s and 10m");
  }
  return {
    urls,
    nodeId,
    ...(advertise === undefined ? {} : { advertisedAddress: advertise }),
    ...(leaseTtlMs === undefined ? {} : { leaseTtlMs }),
    ...(values["route-only"] === true ? { routeOnly: true } : {}),
  };
}
