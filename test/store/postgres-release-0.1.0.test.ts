// A cluster database written by release 0.1.0's brokers (a pg_dump in
// test/fixtures/release-0.1.0, made by its own code) opens in today's
// broker with everything in it; a layout newer than this holdshelf reads is
// refused with every row and table as it was, at start and when a running
// broker reconnects; the layout's upgrade steps commit with their stamp or
// not at all.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { ShardCluster } from "../../src/cluster/shard-cluster.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { ensureCluster } from "../../src/store/postgres/postgres-schema.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { postgresLayoutVersion, type PostgresLayout } from "../../src/store/postgres/schema-upgrades.js";
import { FormatTooNewError } from "../../src/store/store-open-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { postgresSnapshot } from "../support/postgres-snapshot.js";
import { expectReleaseData, readFixture, restoreDump } from "../support/release-0.1.0.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("a cluster database of release 0.1.0", () => {
  let url: string;
  let admin: pg.Client;
  beforeEach(async () => {
    url = await postgres().createDatabase();
    await restoreDump(url);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    await admin.end();
  });

  it("opens with every queue, message, lease, move task and deduplication id, at layout 1", async () => {
    const fixture = await readFixture("postgres");
    const clock = new FakeClock(fixture.madeAt);
    const server = await startHoldshelfServer({
      dataDir: "/nonexistent-in-cluster-mode",
      listen: "127.0.0.1:0",
      clock,
      postgres: { urls: [url], nodeId: "upgraded", shardCount: 8 },
    });
    const client = new QueueClient(server.address);
    try {
      await expectReleaseData(client, fixture, clock);
    } finally {
      client.close();
      await server.shutdown();
    }
    const { rows } = await admin.query("SELECT layout_version, shard_count FROM holdshelf_cluster");
    expect(rows).toEqual([{ layout_version: postgresLayoutVersion, shard_count: 8 }]);
  });

  it("is refused at start, with every table and row as it was, once at a layout newer than this holdshelf reads", async () => {
    await admin.query("UPDATE holdshelf_cluster SET layout_version = $1", [postgresLayoutVersion + 1]);
    const before = await postgresSnapshot(admin);
    const refused = await ShardCluster.open({ urls: [url], nodeId: "old", advertisedAddress: "old:1" }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FormatTooNewError);
    expect(refused).toMatchObject({ code: "DATA_FORMAT_TOO_NEW", found: 2, known: 1 });
    expect((refused as Error).message).toBe(
      "the cluster's database is in holdshelf layout 2, newer than layout 1, the newest this holdshelf reads: " +
        "run a holdshelf release that reads layout 2 (docs/upgrading.md). Nothing was changed",
    );
    expect(await postgresSnapshot(admin)).toEqual(before);
  });

  it("stops a running broker whose layout a newer release raised (fencing it), and keeps it out when it reconnects", async () => {
    const { store } = await ShardCluster.open({ urls: [url], nodeId: "running", advertisedAddress: "running:1" });
    try {
      await store.load();
      // What a layout step must do (schema-upgrades.ts): raise the layout and bump every epoch in one transaction.
      await admin.query("BEGIN");
      await admin.query("UPDATE holdshelf_cluster SET layout_version = $1", [postgresLayoutVersion + 1]);
      await admin.query("UPDATE holdshelf_shards SET epoch = epoch + 1, owner = NULL, expires_at = NULL");
      await admin.query("COMMIT");
      const before = await postgresSnapshot(admin);
      await expect(store.probeWrite()).rejects.toMatchObject({ reason: "STORAGE_UNAVAILABLE" });
      const reconnect = await (store as PostgresStore).reopen().catch((error: unknown) => error);
      expect(reconnect).toMatchObject({
        reason: "STORAGE_UNAVAILABLE",
        message: expect.stringContaining("is in holdshelf layout 2, newer than layout 1"),
      });
      expect(await postgresSnapshot(admin)).toEqual(before);
    } finally {
      await store.close().catch(() => undefined);
    }
  });

  it("commits a layout's upgrade steps with their stamp, or none of them", async () => {
    const failing: PostgresLayout = {
      version: 3,
      upgrades: [
        { to: 2, run: async (client) => void (await client.query("ALTER TABLE holdshelf_queues ADD COLUMN two int")) },
        { to: 3, run: () => Promise.reject(new Error("step 3 failed")) },
      ],
    };
    const before = await postgresSnapshot(admin);
    await expect(ensureCluster(admin, 8, failing)).rejects.toThrow("step 3 failed");
    expect(await postgresSnapshot(admin)).toEqual(before);
    const seen: number[] = [];
    const upgrades = [2, 3].map((to) => ({
      to,
      run: async (client: pg.ClientBase) => {
        const { rows } = await client.query<{ layout_version: number }>("SELECT layout_version FROM holdshelf_cluster");
        seen.push(rows[0]!.layout_version);
      },
    }));
    await ensureCluster(admin, 8, { version: 3, upgrades });
    expect(seen).toEqual([1, 2]);
    const { rows } = await admin.query("SELECT layout_version FROM holdshelf_cluster");
    expect(rows).toEqual([{ layout_version: 3 }]);
  });
});
