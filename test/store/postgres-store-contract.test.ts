// The store contract on PostgresStore: one real PostgreSQL server for the
// file, a new database per test; a reopen is a new store (the same node id)
// on the same database, as a broker's restart is.
import pg from "pg";
import { describe } from "vitest";
import { ShardCluster } from "../../src/cluster/shard-cluster.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { describeStoreContract, type StoreUnderTest } from "./store-contract.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("on PostgreSQL", () => {
  describeStoreContract("PostgresStore", async () => {
    const url = await postgres().createDatabase();
    const open = async (): Promise<PostgresStore> =>
      (await ShardCluster.open({ urls: [url], nodeId: "contract", advertisedAddress: "127.0.0.1:1", shardCount: 4 }))
        .store;
    // Rewrites one stored value as an older holdshelf wrote it.
    const replaceOne = async (statement: string, values: unknown[]): Promise<void> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rowCount } = await client.query(statement, values);
        if (rowCount !== 1) throw new Error(`nothing stored to replace: ${statement}`);
      } finally {
        await client.end();
      }
    };
    const fixture: StoreUnderTest = {
      store: await open(),
      async reopen() {
        await fixture.store.close();
        fixture.store = await open();
        return fixture.store;
      },
      putRawContent: (dataId, id, value) =>
        replaceOne("UPDATE holdshelf_content SET content = $3 WHERE data_id = $1 AND id = $2::uuid", [
          dataId,
          id,
          value,
        ]),
      putRawQueueRecord: (name, value) =>
        replaceOne("UPDATE holdshelf_queues SET record = $2 WHERE name = $1", [name, value]),
      dispose: () => fixture.store.close(),
    };
    return fixture;
  });
});
