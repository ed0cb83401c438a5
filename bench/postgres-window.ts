/**
 * PostgreSQL's side of a measured window, for the scenarios whose brokers
 * store on a PostgreSQL server the bench started (11 and 12): the server's
 * CPU (every postgres process but the bench's own connection), its
 * transactions and WAL fsyncs (pg_stat_database, pg_stat_wal), its write
 * transactions and WAL bytes, the brokers' commit times, and the figures a
 * row reports from them.
 */
import pg from "pg";
import { commitTimeFigures, readCommitTime } from "./commit-time.js";
import type { PostgresServerChild } from "./postgres-server-child.js";
import { machineCpu } from "./machine-load.js";
import { cpuPercent, sampleProcess } from "./proc-stats.js";
import {
  measureBrokersWindow,
  microsPerMessage,
  type BenchBroker,
  type ScenarioResult,
  type Window,
} from "./scenario.js";

// Table rows PostgreSQL reads a message when every statement looks its rows up by key
// (about 4 through indexes and 1-3 by scans of the small shard and member tables);
// far more means a plan scanned a whole table or data space (see docs/performance.md).
const keyedRowsPerMessage = 20;

// PostgreSQL 15's backends publish their counters (pg_stat_database, pg_stat_wal)
// at most once a second while busy, and within 10 s once idle: wait this long
// around the window before reading them, so that each reading holds all that
// went before it.
const statsSettleMs = 12_000;

/** The bench's connection to one database of its PostgreSQL server, which reads the counters. */
export interface PostgresReader {
  readonly server: PostgresServerChild;
  /** The database the brokers use, created for them by openPostgresReader. */
  readonly database: string;
  readonly client: pg.Client;
  /** Its backend's pid: the server's CPU leaves it out. */
  readonly pid: number;
  close(): Promise<void>;
}

/** What PostgreSQL and the brokers' commits did during a window. */
export interface PostgresWindow {
  /** CPU time of the server's processes, in seconds. */
  readonly cpuSeconds: number;
  /** CPU time of every process on the machine, the bench's and others', in seconds. */
  readonly machineBusySeconds: number;
  /** CPU time the hypervisor gave to other guests, in seconds. */
  readonly stolenSeconds: number;
  /** Transactions committed in the database, reads included (pg_stat_database.xact_commit). */
  readonly commits: number;
  /** WAL fsyncs, by backends and the WAL writer (pg_stat_wal.wal_sync). */
  readonly walSyncs: number;
  /**
   * Table rows read by sequential scans and fetched through indexes, and
   * autovacuum and autoanalyze runs: where PostgreSQL's CPU per message
   * jumps, these say whether a plan turned to scans or vacuum was running.
   */
  readonly seqRows: number;
  readonly indexRows: number;
  readonly autovacuums: number;
  /** Transactions that wrote (each takes a transaction id). */
  readonly writeTransactions: number;
  readonly walBytes: number;
  /** The brokers' mean group commit and writer busy share (commitTimeFigures). */
  readonly commitTime: Record<string, number>;
}

/** The counters that settle late; the difference of two readings is the window's. */
interface ServerCounters {
  readonly commits: number;
  readonly walSyncs: number;
  /** Rows read by sequential scans, and fetched by index scans, of the database's tables (pg_stat_user_tables). */
  readonly seqRows: number;
  readonly indexRows: number;
  /** Autovacuum and autoanalyze runs on its tables so far. */
  readonly autovacuums: number;
}

/** Counters that are exact the moment they are read. */
interface ExactCounters {
  /** Bytes of WAL written so far (pg_current_wal_lsn). */
  readonly walBytes: number;
  /** The next transaction id: each transaction that writes takes one. */
  readonly nextXid: number;
}

/** Creates `database` on the server and connects the bench's reader to it. */
export async function openPostgresReader(server: PostgresServerChild, database: string): Promise<PostgresReader> {
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: server.url(database) });
  await client.connect();
  try {
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    return { server, database, client, pid, close: () => client.end() };
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

/**
 * Runs `work` as a measured window of `brokers` (measureBrokersWindow),
 * with the server's CPU and exact counters read just inside it, and the
 * late counters read after a settle wait on either side (whose seconds
 * they include: lease renewals, balancing reads).
 */
export async function measurePostgresWindow<T>(
  reader: PostgresReader,
  brokers: readonly BenchBroker[],
  log: (line: string) => void,
  work: () => Promise<T>,
): Promise<{ window: Window; value: T; postgres: PostgresWindow }> {
  await settle(log);
  const countersBefore = await readServerCounters(reader);
  const commitTimeBefore = await readCommitTime(brokers);
  const { window, value: measured } = await measureBrokersWindow(brokers, async () => {
    const exactBefore = await readExactCounters(reader.client);
    const cpuBefore = reader.server.cpuSeconds([reader.pid]);
    const machineBefore = machineCpu();
    const value = await work();
    const machineAfter = machineCpu();
    const cpuAfter = reader.server.cpuSeconds([reader.pid]);
    const exactAfter = await readExactCounters(reader.client);
    const machine = {
      busySeconds: machineAfter.busySeconds - machineBefore.busySeconds,
      stolenSeconds: machineAfter.stolenSeconds - machineBefore.stolenSeconds,
    };
    return { value, cpuSeconds: cpuAfter - cpuBefore, machine, exactBefore, exactAfter };
  });
  const commitTimeAfter = await readCommitTime(brokers);
  await settle(log);
  const countersAfter = await readServerCounters(reader);
  const { exactBefore, exactAfter } = measured;
  return {
    window,
    value: measured.value,
    postgres: {
      cpuSeconds: measured.cpuSeconds,
      machineBusySeconds: measured.machine.busySeconds,
      stolenSeconds: measured.machine.stolenSeconds,
      commits: countersAfter.commits - countersBefore.commits,
      walSyncs: countersAfter.walSyncs - countersBefore.walSyncs,
      seqRows: countersAfter.seqRows - countersBefore.seqRows,
      indexRows: countersAfter.indexRows - countersBefore.indexRows,
      autovacuums: countersAfter.autovacuums - countersBefore.autovacuums,
      writeTransactions: exactAfter.nextXid - exactBefore.nextXid,
      walBytes: exactAfter.walBytes - exactBefore.walBytes,
      commitTime: commitTimeFigures(commitTimeBefore, commitTimeAfter, window.seconds),
    },
  };
}

/**
 * What the brokers and PostgreSQL spend with no load (lease renewals, each
 * broker's balancing reads every 200 ms) over `seconds`: the per-broker cost
 * that more brokers add whatever the rate. Call it right after
 * measurePostgresWindow, whose settle wait leaves the late counters current.
 */
export async function measurePostgresIdle(
  reader: PostgresReader,
  brokers: readonly BenchBroker[],
  seconds: number,
): Promise<Record<string, number>> {
  const countersBefore = await readServerCounters(reader);
  const exactBefore = await readExactCounters(reader.client);
  // Sampled here rather than by measureBrokersWindow: an idle stretch is no window for the CPU profiles.
  const brokersBefore = brokers.map((broker) => sampleProcess(broker.pid));
  const postgresBefore = reader.server.cpuSeconds([reader.pid]);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const postgresSeconds = reader.server.cpuSeconds([reader.pid]) - postgresBefore;
  const brokersAfter = brokers.map((broker) => sampleProcess(broker.pid));
  const elapsed = (brokersAfter[0]!.atMs - brokersBefore[0]!.atMs) / 1000;
  const exactAfter = await readExactCounters(reader.client);
  const countersAfter = await readServerCounters(reader);
  return {
    "idle: brokers' CPU %": brokersBefore.reduce(
      (total, sample, index) => total + cpuPercent(sample, brokersAfter[index]!),
      0,
    ),
    "idle: postgres CPU %": (100 * postgresSeconds) / elapsed,
    "idle: postgres commits/s": (countersAfter.commits - countersBefore.commits) / elapsed,
    "idle: write transactions/s": (exactAfter.nextXid - exactBefore.nextXid) / elapsed,
  };
}

/**
 * The figures every PostgreSQL row reports: commit times, the server's CPU
 * per message and in all, transactions and WAL, and the CPU that processes
 * other than the brokers, the server and this client took meanwhile (the
 * noise a load average read before the scenario does not show).
 */
export function postgresFigures(
  result: ScenarioResult,
  postgres: PostgresWindow,
  reader: PostgresReader,
): Record<string, number | string> {
  const { messages, seconds } = result;
  const postgresMicros = microsPerMessage(postgres.cpuSeconds, messages);
  const benchCpuPercent =
    (result.brokerCpuPercent ?? NaN) + (result.clientCpuPercent ?? NaN) + (100 * postgres.cpuSeconds) / seconds;
  const rowsPerMessage = (postgres.seqRows + postgres.indexRows) / messages;
  return {
    ...(rowsPerMessage > keyedRowsPerMessage
      ? {
          warning: `PostgreSQL read ${rowsPerMessage.toFixed(0)} table rows a message: a statement scanned a table instead of looking rows up by key`,
        }
      : {}),
    ...postgres.commitTime,
    "postgres µs/msg": postgresMicros,
    "postgres CPU %": (100 * postgres.cpuSeconds) / seconds,
    "broker + postgres µs/msg": (result.brokerCpuMicrosPerMessage ?? NaN) + postgresMicros,
    "postgres commits/s (xact_commit, reads included)": postgres.commits / seconds,
    "msg per postgres commit": messages / postgres.commits,
    "write transactions/s (xids)": postgres.writeTransactions / seconds,
    "msg per write transaction": messages / postgres.writeTransactions,
    "WAL bytes/msg": postgres.walBytes / messages,
    "WAL fsyncs/s": postgres.walSyncs / seconds,
    "rows seq-scanned/msg": postgres.seqRows / messages,
    "rows fetched by index/msg": postgres.indexRows / messages,
    "autovacuum and autoanalyze runs": postgres.autovacuums,
    "other processes' CPU %": (100 * postgres.machineBusySeconds) / seconds - benchCpuPercent,
    "CPU % stolen by the hypervisor": (100 * postgres.stolenSeconds) / seconds,
    postgres: reader.server.settings,
    counters: `xact_commit and wal_sync read ${statsSettleMs / 1000} s before and after the window (they include those seconds' lease renewals)`,
  };
}

async function settle(log: (line: string) => void): Promise<void> {
  log(`waiting ${statsSettleMs / 1000} s for PostgreSQL's counters to settle`);
  await new Promise((resolve) => setTimeout(resolve, statsSettleMs));
}

async function readServerCounters(reader: PostgresReader): Promise<ServerCounters> {
  // pg_stat_user_tables covers the database the reader is connected to: the brokers'.
  const { rows } = await reader.client.query<{
    commits: string;
    wal_syncs: string;
    seq_rows: string;
    index_rows: string;
    autovacuums: string;
  }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits,
            (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs,
            coalesce(sum(seq_tup_read), 0) AS seq_rows,
            coalesce(sum(idx_tup_fetch), 0) AS index_rows,
            coalesce(sum(autovacuum_count + autoanalyze_count), 0) AS autovacuums
     FROM pg_stat_user_tables`,
    [reader.database],
  );
  const row = rows[0]!;
  return {
    commits: Number(row.commits),
    walSyncs: Number(row.wal_syncs),
    seqRows: Number(row.seq_rows),
    indexRows: Number(row.index_rows),
    autovacuums: Number(row.autovacuums),
  };
}

async function readExactCounters(client: pg.Client): Promise<ExactCounters> {
  // pg_snapshot_xmax of a snapshot is the next id to be assigned; reading it assigns none.
  const { rows } = await client.query<{ wal_bytes: string; next_xid: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal_bytes,
            pg_snapshot_xmax(pg_current_snapshot()) AS next_xid`,
  );
  return { walBytes: Number(rows[0]!.wal_bytes), nextXid: Number(rows[0]!.next_xid) };
}
