// Which store the broker tests run on. The gRPC and client suites run twice
// (vitest.config.ts): on the embedded LevelDB store, and with
// HOLDSHELF_TEST_STORE=postgres on PostgreSQL, one real server per test file
// and a new database per broker.
import { afterAll } from "vitest";
import type { ClusterStorage } from "../../src/server/holdshelf-server.js";
import { startPostgres, type PostgresServer } from "./postgres-server.js";

/** Whether this run's brokers keep their data in PostgreSQL (cluster mode). */
export const onPostgres = process.env.HOLDSHELF_TEST_STORE === "postgres";

let server: Promise<PostgresServer> | undefined;
if (onPostgres) {
  afterAll(async () => {
    await (await server)?.stop();
  });
}

let brokers = 0;

/** Cluster storage on a new, empty database of this file's PostgreSQL server (started on first use). */
export async function freshClusterStorage(): Promise<ClusterStorage> {
  server ??= startPostgres();
  const url = await (await server).createDatabase();
  // A small shard count and lease: a test broker's restart reclaims at once (same node id) either way.
  return { urls: [url], nodeId: `test-broker-${++brokers}`, shardCount: 8 };
}
