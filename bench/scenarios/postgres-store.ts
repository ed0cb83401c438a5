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
import { commitTimeFigures, readCommitTime } from "../commit-time.js";
import { createQueue, runPipeline } from "../pipeline.js";
import { findPostgres, withPostgresServer } from "../postgres-scenario.js";
import type { PostgresServerChild } from "../postgres-server-child.js";
import { measurePostgresWindow, openPostgresReader, postgresFigures } from "../postgres-window.js";
import {
  measureWindow,
  microsPerMessage,
  percentiles,
  resultOf,
  type BenchBroker,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
} from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const queue = "bench";
const database = "holdshelf_bench";
const warmupMessages = 5_000;

export const postgresStore: Scenario = {
  name: "postgres",
  sizeMeaning: "messages moved end to end, on each store",
  defaultSize: 200_000,
  async run(context) {
    const postgres = findPostgres(context, "postgres", "11 PostgreSQL store");
    if ("skipped" in postgres) return postgres.skipped;
    const messages = context.size ?? this.defaultSize;

    context.log("postgres: the LevelDB baseline");
    const level = await context.startBroker();
    const baseline = await measureBatched(context, level, messages, "11 LevelDB store (baseline), scenario 1's load");
    // stop() is idempotent: the context's cleanup calling it again is harmless.
    await level.stop();

    return withPostgresServer(context, "postgres", postgres.binDir, async (server) => [
      baseline,
      await measurePostgres(context, server, messages, baseline),
    ]);
  },
};

/** The PostgreSQL row: a broker on `server`, scenario 1's load, and the server's CPU and counters around the window. */
async function measurePostgres(
  context: ScenarioContext,
  server: PostgresServerChild,
  messages: number,
  baseline: ScenarioResult,
): Promise<ScenarioResult> {
  const reader = await openPostgresReader(server, database);
  let broker: BenchBroker | undefined;
  try {
    broker = await context.startBroker(undefined, {
      serve: ["--postgres", server.url(database), "--node-id", "bench"],
    });
    const pgBroker = broker;
    await createQueue(pgBroker.address, queue);
    context.log(`postgres: ${server.version}: warm-up of ${warmupMessages} messages`);
    await runPipeline(pgBroker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
    const {
      window,
      value: latencies,
      postgres,
    } = await measurePostgresWindow(
      reader,
      [pgBroker],
      (line) => context.log(`postgres: ${line}`),
      () => {
        context.log(
          `postgres: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`,
        );
        return runPipeline(pgBroker.address, { queue, messages, ...batchedPipelineShape });
      },
    );
    await pgBroker.stop();

    const result = resultOf(
      `11 PostgreSQL store (${server.version}, one broker), scenario 1's load`,
      messages,
      window,
      percentiles(latencies),
    );
    const brokerMicros = result.brokerCpuMicrosPerMessage ?? NaN;
    const levelMicros = baseline.brokerCpuMicrosPerMessage ?? NaN;
    return {
      ...result,
      extra: {
        ...postgresFigures(result, postgres, reader),
        "ratio of total µs/msg to LevelDB's":
          (brokerMicros + microsPerMessage(postgres.cpuSeconds, messages)) / levelMicros,
        "ratio of broker µs/msg to LevelDB's": brokerMicros / levelMicros,
        "msg/s ratio to LevelDB's": result.messagesPerSecond / baseline.messagesPerSecond,
      },
    };
  } finally {
    // The broker goes before the server: stopped the other way, it would exit failing its last writes.
    await broker?.stop().catch(() => undefined);
    await reader.close().catch(() => undefined);
  }
}

/** Scenario 1's warm-up and measured window on a broker, as its own row. */
async function measureBatched(
  context: ScenarioContext,
  broker: BenchBroker,
  messages: number,
  scenario: string,
): Promise<ScenarioResult> {
  await createQueue(broker.address, queue);
  context.log(`postgres: warm-up of ${warmupMessages} messages`);
  await runPipeline(broker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
  context.log(
    `postgres: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`,
  );
  const before = await readCommitTime([broker]);
  const { window, value: latencies } = await measureWindow(broker, () =>
    runPipeline(broker.address, { queue, messages, ...batchedPipelineShape }),
  );
  const after = await readCommitTime([broker]);
  return resultOf(scenario, messages, window, percentiles(latencies), commitTimeFigures(before, after, window.seconds));
}
