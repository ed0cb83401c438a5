import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresClusterQueues } from "../../src/store/postgres/postgres-cluster-queues.js";
import { freePort } from "../support/free-port.js";

// The cluster's view of other brokers' queues, when PostgreSQL is down (or
// failing over): every read fails as the store's own do, STORAGE_UNAVAILABLE,
// which background work does not log again (the crash harness's database
// failover found a dead-letter move logging the raw connection error).
describe("PostgresClusterQueues without a database", () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it("fails every read with STORAGE_UNAVAILABLE, naming no host", async () => {
    const pool = new pg.Pool({
      connectionString: `postgres://holdshelf@127.0.0.1:${await freePort()}/holdshelf`,
      connectionTimeoutMillis: 2000,
    });
    pools.push(pool);
    const queues = new PostgresClusterQueues(
      () => pool,
      () => false,
      () => 0,
    );
    const reads = [
      queues.existsElsewhere("jobs"),
      queues.deadLetterSourcesElsewhere("dlq"),
      queues.takenIn("dlq", ["01a23dc6-f958-7000-87a9-8f0d2cd4a66b"]),
      queues.refresh(),
    ];
    for (const read of reads) {
      const error = await read.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toMatchObject({ reason: "STORAGE_UNAVAILABLE" });
      expect((error as Error).message).not.toContain("127.0.0.1");
    }
  });
});
