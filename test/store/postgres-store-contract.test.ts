// The store contract on PostgresStore: one real PostgreSQL server for the
// file, a new database per test; a reopen is a new store (the same node id)
// on the same database, as a broker's restart is.
import pg from "pg";
import { describe } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { describeStoreContract, type StoreUnderTest } from "./store-contract.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("on PostgreSQL", () => {
  describeStoreContract("PostgresStore", async () => {
    const url = await postgres().createDatabase();
    const open = (): Promise<PostgresStore> =>
      PostgresStore.open({ urls: [url], nodeId: "contract", advertisedAddress: "127.0.0.1:1", shardCount: 4 });
    const fixture: StoreUnderTest = {
      store: await open(),
      async reopen() {
        await fixture.store.close();
        fixture.store = await open();
        return fixture.store;
      },
      async putRawContent(dataId, id, value) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const { rowCount } = await client.query("UPDATE holdshelf_content SET content = $3 WHERE data_id = $1 AND id = $2::uuid", [
            dataId,
            id,
            value,
          ]);
          if (rowCount !== 1) throw new Error(`no stored content ${dataId}/${id} to replace`);
        } finally {
          await client.end();
        }
      },
      dispose: () => fixture.store.close(),
    };
    return fixture;
  });
});
