/**
 * Scenario 11, cluster storage: scenario 1's load (4 producers SendBatch
 * 100, 4 consumers Receive 100 and DeleteBatch) through a broker on the
 * embedded LevelDB store and then through one started with `--postgres` on a
 * PostgreSQL server the scenario starts itself (postgres-server-child.ts),
 * one row each, measured back to back in the same run.
 *
 * The PostgreSQL row adds the server's CPU per message (every postgres
 * process of that server), its transactions per second and messages per
 * transaction (pg_stat_database's xact_commit), its write transactions
 * (transaction ids assigned) and WAL per message, and the ratio of the
 * total CPU per message, broker plus PostgreSQL, to the LevelDB broker's:
 * what a message costs in CPU when its storage moves to PostgreSQL, which
 * is what says how many brokers one PostgreSQL primary can serve.
 *
 * The LevelDB baseline runs here rather than being taken from scenario 1, so
 * that the ratio compares two windows measured back to back, whichever
 * scenarios ran before. With --durability os, PostgreSQL runs with
 * synchronous_commit off. Skipped, with one row saying why, where PostgreSQL
 * is not installed.
 */
import pg from "pg";
import { requireValue, scrapeBroker } from "../broker-scrape.js";
import { createQueue, runPipeline } from "../pipeline.js";
import { postgresBinDir, startPostgresServer, type PostgresServerChild } from "../postgres-server-child.js";
import {
  measureWindow,
  microsPerMessage,
  percentiles,
  resultOf,
  skippedRow,
  type BenchBroker,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
} from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const queue = "bench";
const database = "holdshelf_bench";
const warmupMessages = 5_000;
// PostgreSQL 15's backends publish their counters (pg_stat_database, pg_stat_wal)
// at most once a second while busy, and within 10 s once idle: wait this long
// around the window before reading them, so that each reading holds all that
// went before it.
const statsSettleMs = 12_000;

/** PostgreSQL's counters that a window reads twice; the difference is the window's. */
interface ServerCounters {
  /** Transactions committed in the bench's database, reads included (pg_stat_database.xact_commit). */
  readonly commits: number;
  /** WAL fsyncs, by backends and the WAL writer (pg_stat_wal.wal_sync). */
  readonly walSyncs: number;
}

/** A broker's time spent writing group-commit batches so far, and the batches. */
interface CommitTime {
  readonly seconds: number;
  readonly batches: number;
}

/** Counters that are exact the moment they are read. */
interface ExactCounters {
  /** Bytes of WAL written so far (pg_current_wal_lsn). */
  readonly walBytes: number;
  /** The next transaction id: each transaction that writes takes one. */
  readonly nextXid: number;
}

export const postgresStore: Scenario = {
  name: "postgres",
  sizeMeaning: "messages moved end to end, on each store",
  defaultSize: 200_000,
  async run(context) {
    const binDir = postgresBinDir();
    if (binDir === undefined) {
      context.log("postgres: skipped, PostgreSQL is not installed");
      return [skippedRow("11 PostgreSQL store", "PostgreSQL is not installed (Debian: apt-get install postgresql)")];
    }
    const messages = context.size ?? this.defaultSize;

    context.log("postgres: the LevelDB baseline");
    const level = await context.startBroker();
    const baseline = await measureBatched(context, level, messages, "11 LevelDB store (baseline), scenario 1's load");
    // stop() is idempotent: the context's cleanup calling it again is harmless.
    await level.stop();

    context.log("postgres: starting a PostgreSQL server");
    const server = await startPostgresServer({ binDir, synchronousCommit: context.durability === "fsync" });
    try {
      return [baseline, await measurePostgres(context, server, messages, baseline)];
    } finally {
      context.log("postgres: stopping the PostgreSQL server");
      await server.stop();
    }
  },
};

/** The PostgreSQL row: a broker on `server`, scenario 1's load, and the server's CPU and counters around the window. */
async function measurePostgres(
  context: ScenarioContext,
  server: PostgresServerChild,
  messages: number,
  baseline: ScenarioResult,
): Promise<ScenarioResult> {
  // The bench's own connection, which reads the counters: its backend's CPU is left out of the server's.
  const reader = new pg.Client({ connectionString: server.url() });
  await reader.connect();
  let broker: BenchBroker | undefined;
  try {
    await reader.query(`CREATE DATABASE ${database}`);
    const readerPid = (await reader.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    broker = await context.startBroker(undefined, { serve: ["--postgres", server.url(database), "--node-id", "bench"] });
    const pgBroker = broker;
    await createQueue(pgBroker.address, queue);
    context.log(`postgres: ${server.version}: warm-up of ${warmupMessages} messages`);
    await runPipeline(pgBroker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
    context.log(`postgres: waiting ${statsSettleMs / 1000} s for PostgreSQL's counters to settle`);
    await new Promise((resolve) => setTimeout(resolve, statsSettleMs));
    const countersBefore = await readServerCounters(reader);

    context.log(`postgres: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`);
    const commitTimeBefore = await readCommitTime(pgBroker);
    const { window, value } = await measureWindow(pgBroker, async () => {
      const exactBefore = await readExactCounters(reader);
      const cpuBefore = server.cpuSeconds([readerPid]);
      const latencies = await runPipeline(pgBroker.address, { queue, messages, ...batchedPipelineShape });
      const cpuAfter = server.cpuSeconds([readerPid]);
      const exactAfter = await readExactCounters(reader);
      return { latencies, postgresCpuSeconds: cpuAfter - cpuBefore, exactBefore, exactAfter };
    });
    const commitTimeAfter = await readCommitTime(pgBroker);
    context.log(`postgres: waiting ${statsSettleMs / 1000} s for PostgreSQL's counters to settle`);
    await new Promise((resolve) => setTimeout(resolve, statsSettleMs));
    const countersAfter = await readServerCounters(reader);
    await pgBroker.stop();

    const result = resultOf(`11 PostgreSQL store (${server.version}, one broker), scenario 1's load`, messages, window, percentiles(value.latencies));
    const postgresMicros = microsPerMessage(value.postgresCpuSeconds, messages);
    const brokerMicros = result.brokerCpuMicrosPerMessage ?? NaN;
    const levelMicros = baseline.brokerCpuMicrosPerMessage ?? NaN;
    const commits = countersAfter.commits - countersBefore.commits;
    const writeTransactions = value.exactAfter.nextXid - value.exactBefore.nextXid;
    return {
      ...result,
      extra: {
        ...commitTimeFigures(commitTimeBefore, commitTimeAfter, window.seconds),
        "postgres µs/msg": postgresMicros,
        "postgres CPU %": (100 * value.postgresCpuSeconds) / window.seconds,
        "broker + postgres µs/msg": brokerMicros + postgresMicros,
        "ratio of total µs/msg to LevelDB's": (brokerMicros + postgresMicros) / levelMicros,
        "ratio of broker µs/msg to LevelDB's": brokerMicros / levelMicros,
        "msg/s ratio to LevelDB's": result.messagesPerSecond / baseline.messagesPerSecond,
        "postgres commits/s (xact_commit, reads included)": commits / window.seconds,
        "msg per postgres commit": messages / commits,
        "write transactions/s (xids)": writeTransactions / window.seconds,
        "msg per write transaction": messages / writeTransactions,
        "WAL bytes/msg": (value.exactAfter.walBytes - value.exactBefore.walBytes) / messages,
        "WAL fsyncs/s": (countersAfter.walSyncs - countersBefore.walSyncs) / window.seconds,
        postgres: server.settings,
        counters: `xact_commit and wal_sync read ${statsSettleMs / 1000} s before and after the window (they include those seconds' lease renewals)`,
      },
    };
  } finally {
    // The broker goes before the server: stopped the other way, it would exit failing its last writes.
    await broker?.stop().catch(() => undefined);
    await reader.end().catch(() => undefined);
  }
}

/** Scenario 1's warm-up and measured window on a broker, as its own row. */
async function measureBatched(context: ScenarioContext, broker: BenchBroker, messages: number, scenario: string): Promise<ScenarioResult> {
  await createQueue(broker.address, queue);
  context.log(`postgres: warm-up of ${warmupMessages} messages`);
  await runPipeline(broker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
  context.log(`postgres: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`);
  const before = await readCommitTime(broker);
  const { window, value: latencies } = await measureWindow(broker, () => runPipeline(broker.address, { queue, messages, ...batchedPipelineShape }));
  const after = await readCommitTime(broker);
  return resultOf(scenario, messages, window, percentiles(latencies), commitTimeFigures(before, after, window.seconds));
}

async function readCommitTime(broker: BenchBroker): Promise<CommitTime> {
  const samples = await scrapeBroker(broker.metricsAddress);
  return {
    seconds: requireValue(samples, "holdshelf_storage_commit_seconds_sum"),
    batches: requireValue(samples, "holdshelf_storage_commit_seconds_count"),
  };
}

/**
 * How long a group-commit batch took to write, and the share of the window
 * the broker's one writer spent writing: near 1, the rate is bound by the
 * store's commit latency (the load keeps only so many calls waiting), not by CPU.
 */
function commitTimeFigures(before: CommitTime, after: CommitTime, windowSeconds: number): Record<string, number> {
  const seconds = after.seconds - before.seconds;
  return {
    "mean group commit ms": (1000 * seconds) / (after.batches - before.batches),
    "writer busy share": seconds / windowSeconds,
  };
}

async function readServerCounters(reader: pg.Client): Promise<ServerCounters> {
  const { rows } = await reader.query<{ commits: string; wal_syncs: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits,
            (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs`,
    [database],
  );
  return { commits: Number(rows[0]!.commits), walSyncs: Number(rows[0]!.wal_syncs) };
}

async function readExactCounters(reader: pg.Client): Promise<ExactCounters> {
  // pg_snapshot_xmax of a snapshot is the next id to be assigned; reading it assigns none.
  const { rows } = await reader.query<{ wal_bytes: string; next_xid: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal_bytes,
            pg_snapshot_xmax(pg_current_snapshot()) AS next_xid`,
  );
  return { walBytes: Number(rows[0]!.wal_bytes), nextXid: Number(rows[0]!.next_xid) };
}
