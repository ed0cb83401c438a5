/**
 * Scenario 20, a drained queue filled again on PostgreSQL: scenario 1's load
 * through one broker started with `--postgres`, measured after the queue
 * drained, the tables were analyzed drained, and a backlog was sent.
 *
 * A queue that drains leaves its tables' pages full of dead rows; the
 * autoanalyze that comes by then records them as almost empty, and the
 * planner takes them for one-row tables for as long as those statistics
 * last. Statements free to choose their plan then walked a whole table for
 * every commit and body read (docs/performance.md). This scenario runs the
 * ANALYZE itself, right after the warm-up drained the queue, rather than
 * waiting for autoanalyze to come by at the wrong moment, so every run
 * measures that state. Its row is scenario 11's PostgreSQL row: the
 * `warning` appears when PostgreSQL read more than 20 table rows a message.
 */
import { createQueue, runPipeline } from "../pipeline.js";
import { findPostgres, withPostgresServer } from "../postgres-scenario.js";
import type { PostgresServerChild } from "../postgres-server-child.js";
import { measurePostgresWindow, openPostgresReader, postgresFigures } from "../postgres-window.js";
import {
  percentiles,
  resultOf,
  type BenchBroker,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
} from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const queue = "bench";
const database = "holdshelf_refill";
const warmupMessages = 5_000;
// Sent before the window with no consumer: the queue the window's consumers work through is this deep.
const backlogMessages = 20_000;

export const postgresRefill: Scenario = {
  name: "postgres-refill",
  sizeMeaning: "messages moved end to end after the drain, analyze and refill",
  defaultSize: 100_000,
  async run(context) {
    const postgres = findPostgres(context, "postgres-refill", "20 PostgreSQL store, a drained queue filled again");
    if ("skipped" in postgres) return postgres.skipped;
    const messages = context.size ?? this.defaultSize;
    return withPostgresServer(context, "postgres-refill", postgres.binDir, async (server) => [
      await measureRefill(context, server, messages),
    ]);
  },
};

async function measureRefill(
  context: ScenarioContext,
  server: PostgresServerChild,
  messages: number,
): Promise<ScenarioResult> {
  const log = (line: string): void => context.log(`postgres-refill: ${line}`);
  const reader = await openPostgresReader(server, database);
  let broker: BenchBroker | undefined;
  try {
    broker = await context.startBroker(undefined, {
      serve: ["--postgres", server.url(database), "--node-id", "bench"],
    });
    const pgBroker = broker;
    await createQueue(pgBroker.address, queue);
    log(`${server.version}: warm-up of ${warmupMessages} messages, which drains the queue`);
    await runPipeline(pgBroker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
    log("ANALYZE of the drained tables, as autoanalyze does when it comes by now");
    await reader.client.query("ANALYZE holdshelf_content, holdshelf_schedule, holdshelf_checkpoints");
    log(`a backlog of ${backlogMessages} messages`);
    await runPipeline(pgBroker.address, {
      queue,
      messages: backlogMessages,
      ...batchedPipelineShape,
      consumers: 0,
    });
    const {
      window,
      value: latencies,
      postgres,
    } = await measurePostgresWindow(reader, [pgBroker], log, () => {
      log(`${messages} messages through the backlog`);
      return runPipeline(pgBroker.address, { queue, messages, ...batchedPipelineShape });
    });
    await pgBroker.stop();
    const result = resultOf(
      `20 PostgreSQL store (${server.version}, one broker), a drained queue analyzed and filled again, scenario 1's load`,
      messages,
      window,
      percentiles(latencies),
    );
    return { ...result, extra: postgresFigures(result, postgres, reader) };
  } finally {
    // The broker goes before the server: stopped the other way, it would exit failing its last writes.
    await broker?.stop().catch(() => undefined);
    await reader.close().catch(() => undefined);
  }
}
