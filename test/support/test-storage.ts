// Which store the broker tests run on. The gRPC and client suites run three
// times (vitest.config.ts): on the embedded LevelDB store; with
// HOLDSHELF_TEST_STORE=postgres on PostgreSQL, one real server per test file
// and a new database per broker; and with HOLDSHELF_TEST_STORE=cluster on a
// cluster of three brokers per test (grpc-harness.ts), the client on one
// that owns no shards, so every call it makes is forwarded.
import { afterAll } from "vitest";
import type { ClusterStorage } from "../../src/server/open-storage.js";
import { startPostgres, type PostgresServer } from "./postgres-server.js";

/** Whether each test's broker is a cluster of three, its client on the one that owns nothing. */
export const inCluster = process.env.HOLDSHELF_TEST_STORE === "cluster";

/** Whether this run's brokers keep their data in PostgreSQL (cluster mode). */
export const onPostgres = process.env.HOLDSHELF_TEST_STORE === "postgres" || inCluster;

let server: Promise<PostgresServer> | undefined;
if (onPostgres) {
  afterAll(async () => {
    await (await server)?.stop();
  });
}

let brokers = 0;

/** A new, empty database of this file's PostgreSQL server (started on first use). */
export async function freshDatabase(): Promise<string> {
  server ??= startPostgres();
  return (await server).createDatabase();
}

/** Cluster storage on a new, empty database of this file's PostgreSQL server (started on first use). */
export async function freshClusterStorage(): Promise<ClusterStorage> {
  const url = await freshDatabase();
  // A small shard count and lease: a test broker's restart reclaims at once (same node id) either way.
  return { urls: [url], nodeId: `test-broker-${++brokers}`, shardCount: 8 };
}
