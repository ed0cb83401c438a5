// PostgresStore's statements look their rows up by key whatever the planner's
// statistics say. After autoanalyze has seen a data table drained (its pages
// full of dead rows, one live), PostgreSQL takes it for a one-row table; a
// statement free to pick its plan then walks the whole table (a sequential
// scan, or the primary key with no condition) on every commit and every body
// read. This reproduces those statistics and counts the rows PostgreSQL reads
// per message as a queue fills and drains again.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ShardCluster } from "../../src/cluster/shard-cluster.js";
import { connectSessions, endSessions } from "../../src/store/postgres/postgres-sessions.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { ScheduleEntry, StoreOp } from "../../src/store/store.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { content, putMessage, queueRecord, readContents, scheduleEntry, t0 } from "./store-fixtures.js";

const postgres = postgresForFile();

// A consumer's batches: each is sent in one commit, read back, then deleted in one commit.
const batchSize = 50;
// A body that fills a few rows a page, as real messages do.
const body = "x".repeat(200);

/** Rows read and fetched, and rows inserted and deleted, in the database's holdshelf tables so far. */
interface TableCounters {
  readonly rowsRead: number;
  readonly inserted: number;
  readonly deleted: number;
}

describe.skipIf(skipWithoutPostgres)("PostgresStore's plans after the statistics saw a drained table", () => {
  let url: string;
  let admin: pg.Client;
  let store: PostgresStore | undefined;

  beforeEach(async () => {
    url = await postgres().createDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await admin.end();
  });

  async function open(): Promise<PostgresStore> {
    const opened = await ShardCluster.open({
      urls: [url],
      nodeId: "plans",
      advertisedAddress: "127.0.0.1:1",
      shardCount: 4,
    });
    store = opened.store;
    await store.load();
    return store;
  }

  async function counters(): Promise<TableCounters> {
    const { rows } = await admin.query<{ rows_read: string; inserted: string; deleted: string }>(
      `SELECT coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0) AS rows_read,
              coalesce(sum(n_tup_ins), 0) AS inserted, coalesce(sum(n_tup_del), 0) AS deleted
       FROM pg_stat_user_tables WHERE relname IN ('holdshelf_content', 'holdshelf_schedule')`,
    );
    const row = rows[0]!;
    return { rowsRead: Number(row.rows_read), inserted: Number(row.inserted), deleted: Number(row.deleted) };
  }

  /** Sends `count` messages in batches, reading each batch's bodies and deleting it as a consumer does. */
  async function sendReceiveDelete(opened: PostgresStore, count: number): Promise<void> {
    for (let sent = 0; sent < count; sent += batchSize) {
      const entries: ScheduleEntry[] = [];
      for (let i = 0; i < batchSize; i++) entries.push(scheduleEntry(t0 + sent + i));
      await opened.commit(entries.map((entry) => putMessage(1, entry, content(body))));
      const read = await readContents(
        opened,
        1,
        entries.map((entry) => entry.id),
      );
      expect(read.every((message) => message !== undefined)).toBe(true);
      await opened.commit(
        entries.map(
          (entry): StoreOp => ({
            kind: "removeMessage",
            dataId: 1,
            id: entry.id,
            readyAt: entry.readyAt,
            hasCheckpoint: false,
          }),
        ),
      );
    }
  }

  /** Writes `count` rows of data space 1 in both tables, as sends do (ids of no message the store holds). */
  async function fillRows(count: number): Promise<void> {
    await admin.query(
      `WITH ids AS (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $1) AS n),
            content AS (INSERT INTO holdshelf_content (data_id, id, content) SELECT 1, id, $2 FROM ids)
       INSERT INTO holdshelf_schedule (data_id, ready_at, id, state) SELECT 1, n, id, '\\x00' FROM ids`,
      [count, Buffer.from(body)],
    );
  }

  it("reads a few rows a message, not the table, once a drained queue fills again", async () => {
    const opened = await open();
    await opened.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    // A queue filled, then drained but for one message: pages of dead rows with one live.
    await fillRows(3000);
    await admin.query("DELETE FROM holdshelf_content WHERE ctid <> (SELECT min(ctid) FROM holdshelf_content)");
    await admin.query("DELETE FROM holdshelf_schedule WHERE ctid <> (SELECT min(ctid) FROM holdshelf_schedule)");
    // What autoanalyze does when it comes by now: the planner takes the tables for one-row tables.
    await admin.query("ANALYZE holdshelf_content, holdshelf_schedule");
    // Filled again while the statistics still say one row: a backlog that the consumers work through.
    await fillRows(2000);
    // This session's counters so far are published at once; the store's sessions have read neither table yet.
    await admin.query("SELECT pg_stat_force_next_flush()");
    let before = await counters();
    await vi.waitFor(
      async () => {
        before = await counters();
        expect(before.inserted).toBe(2 * 5000);
      },
      { timeout: 15_000, interval: 100 },
    );

    const messages = 2000;
    await sendReceiveDelete(opened, messages);
    // PostgreSQL publishes a session's counters when it ends (or idles a while): end the store's sessions.
    await opened.close();
    store = undefined;
    let after = before;
    await vi.waitFor(
      async () => {
        after = await counters();
        // Every message's rows written and deleted are counted: so are the reads of the same sessions.
        expect(after.deleted - before.deleted).toBe(2 * messages);
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(after.inserted - before.inserted).toBe(2 * messages);
    const rowsPerMessage = (after.rowsRead - before.rowsRead) / messages;
    // By key: a body read (1), and each table's delete finding its row (1 or 2 each). A scan reads the backlog.
    expect(rowsPerMessage).toBeLessThan(8);
  }, 120_000);

  it("turns sequential scans and JIT off in every session of the store's pool", async () => {
    const sessions = await connectSessions([url], "settings", 4000);
    try {
      // Each of the pool's connections, not only the first: they are checked out together.
      const clients = await Promise.all([1, 2, 3].map(() => sessions.pool.connect()));
      for (const client of clients) {
        const { rows } = await client.query<{ seqscan: string; jit: string }>(
          "SELECT current_setting('enable_seqscan') AS seqscan, current_setting('jit') AS jit",
        );
        // A statement that must still scan costs past jit_above_cost with scans off: compiling it took most of a second.
        expect(rows[0]).toEqual({ seqscan: "off", jit: "off" });
        client.release();
      }
    } finally {
      await endSessions(sessions);
    }
  });
});
