/**
 * Scenario 12, cluster mode with several active brokers: one PostgreSQL
 * server (postgres-server-child.ts, synchronous_commit per --durability as
 * in scenario 11), and for N = 1, 2 and 3, N new brokers started with
 * `--postgres … --node-id bench-<i>` on a fresh database, sharing its
 * shards. Once the shards sit where the cluster's assignment puts them, each
 * broker gets one queue on its own shards (`bench-<i>-<k>`), and scenario
 * 1's load (4 producers SendBatch 100, 4 consumers Receive 100 and
 * DeleteBatch) is split over the queues, each share's clients connected
 * straight to its queue's owner, as clients that follow owner hints are.
 *
 * A row per N: msg/s, the N brokers' CPU per message together, PostgreSQL's
 * CPU per message and in all, commits and write transactions, what the
 * brokers and PostgreSQL spend with no load, and the ratios of msg/s and of
 * CPU per message to N = 1 in the same run. One more row, on two new
 * brokers, has every client connected to the broker that does not own its
 * queue (owner hints not followed), so every call is forwarded: what
 * forwarding costs per message, against the direct two-broker row. On two
 * cores shared by brokers, PostgreSQL and this client, more brokers cannot
 * show more throughput; the per-message costs are what the rows are for
 * (the sizing model in docs/performance.md). Skipped, with one row saying
 * why, where PostgreSQL is not installed.
 */
import { createQueue, runPipeline, type PipelineOptions } from "../pipeline.js";
import { findPostgres, withPostgresServer } from "../postgres-scenario.js";
import type { PostgresServerChild } from "../postgres-server-child.js";
import {
  measurePostgresIdle,
  measurePostgresWindow,
  openPostgresReader,
  postgresFigures,
  type PostgresReader,
} from "../postgres-window.js";
import { cpuPercent, sampleProcess } from "../proc-stats.js";
import { queueNameOn, readShardTable, shardsMoved, waitForAssignedShards } from "../cluster-shards.js";
import {
  percentiles,
  resultOf,
  skippedRow,
  type BenchBroker,
  type Scenario,
  type ScenarioContext,
  type ScenarioResult,
} from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

/** The rows, in the order they run: N brokers called directly, and the N = 2 cluster with every call forwarded. */
const clusters = [
  { count: 1, forwarded: false },
  { count: 2, forwarded: false },
  { count: 2, forwarded: true },
  { count: 3, forwarded: false },
] as const;
const warmupMessages = 5_000;
const spreadTimeoutMs = 30_000;
const idleSeconds = 10;

/** Where one share of the load goes: a queue, the broker its clients call, and whether they stay there (no owner hints followed). */
interface Target {
  readonly queue: string;
  readonly address: string;
  readonly stay?: boolean;
}

export const clusterBrokers: Scenario = {
  name: "cluster",
  sizeMeaning: "messages moved end to end on each row",
  defaultSize: 100_000,
  async run(context) {
    const postgres = findPostgres(context, "cluster", "12 cluster brokers");
    if ("skipped" in postgres) return postgres.skipped;
    const messages = context.size ?? this.defaultSize;
    const rows = await withPostgresServer(context, "cluster", postgres.binDir, async (server) => {
      const measured: ScenarioResult[] = [];
      for (const { count, forwarded } of clusters)
        measured.push(await measureCluster(context, server, count, forwarded, messages));
      return measured;
    });
    return withComparisons(rows);
  },
};

/**
 * N new brokers on a fresh database, so that every row is a first window
 * (a later window on the same brokers and tables cost the brokers 3-28 µs a
 * message less in runs of this scenario, and drained tables' statistics
 * made its PostgreSQL statements scan them). A row that fails (a call
 * refused, the shards not spreading) says why instead of ending the scenario.
 */
async function measureCluster(
  context: ScenarioContext,
  server: PostgresServerChild,
  count: number,
  forwarded: boolean,
  messages: number,
): Promise<ScenarioResult> {
  const name = `12 cluster: ${brokersLabel(count)}${forwarded ? ", every call forwarded" : ""}`;
  const log = (line: string): void =>
    context.log(`cluster: ${brokersLabel(count)}${forwarded ? " forwarding" : ""}: ${line}`);
  const reader = await openPostgresReader(server, `holdshelf_bench_cluster_${count}${forwarded ? "_forwarded" : ""}`);
  const brokers: BenchBroker[] = [];
  try {
    const nodeIds = Array.from({ length: count }, (_, index) => `bench-${index}`);
    for (const nodeId of nodeIds) {
      brokers.push(
        await context.startBroker(undefined, {
          serve: ["--postgres", server.url(reader.database), "--node-id", nodeId],
        }),
      );
    }
    log("waiting for the shards to spread");
    const members = brokers.map((broker, index) => ({
      nodeId: nodeIds[index]!,
      metricsAddress: broker.metricsAddress,
    }));
    const assigned = await waitForAssignedShards(reader.client, members, spreadTimeoutMs);
    const queues = nodeIds.map((nodeId, index) => queueNameOn(nodeId, assigned, `bench-${index}-`));
    for (const [index, queue] of queues.entries()) await createQueue(brokers[index]!.address, queue);
    const placement = queues.map((queue, index) => `${queue} on ${nodeIds[index]}`).join(", ");
    // Forwarded: each share's clients call the next broker round, which owns none of its queue's
    // shards, and stay there: the client would otherwise follow the owner hint after the first call.
    const targets = queues.map((queue, index) =>
      forwarded
        ? { queue, address: brokers[(index + 1) % count]!.address, stay: true }
        : { queue, address: brokers[index]!.address },
    );
    return await measureRow(
      reader,
      brokers,
      targets,
      messages,
      name,
      forwarded ? `${placement}; clients on the other broker` : placement,
      log,
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    log(`failed: ${reason}`);
    return { ...skippedRow(name, reason), extra: { failed: reason } };
  } finally {
    // The brokers go before the server, and all at once: stopped one by one, each would hand its shards to the rest.
    await Promise.all(brokers.map((broker) => broker.stop().catch(() => undefined)));
    await reader.close().catch(() => undefined);
  }
}

/** A warm-up and a measured window of the load over `targets`, as one row, with the shards that moved during it. */
async function measureRow(
  reader: PostgresReader,
  brokers: readonly BenchBroker[],
  targets: readonly Target[],
  messages: number,
  name: string,
  placement: string,
  log: (line: string) => void,
): Promise<ScenarioResult> {
  log(`warm-up of ${warmupMessages} messages`);
  await runShares(targets, warmupMessages);
  const { window, value, postgres } = await measurePostgresWindow(reader, brokers, log, async () => {
    log(`${messages} messages over ${targets.length} queue${targets.length === 1 ? "" : "s"}`);
    const shardsBefore = await readShardTable(reader.client);
    const cpuBefore = brokers.map((broker) => sampleProcess(broker.pid));
    const latencies = await runShares(targets, messages);
    const cpuAfter = brokers.map((broker) => sampleProcess(broker.pid));
    const moved = shardsMoved(shardsBefore, await readShardTable(reader.client));
    return { latencies, moved, cpuEach: cpuBefore.map((sample, index) => cpuPercent(sample, cpuAfter[index]!)) };
  });
  log(`${idleSeconds} s with no load`);
  const idle = await measurePostgresIdle(reader, brokers, idleSeconds);
  const result = resultOf(name, messages, window, percentiles(value.latencies));
  return {
    ...result,
    extra: {
      ...postgresFigures(result, postgres, reader),
      ...idle,
      "each broker's CPU %": value.cpuEach.map((percent) => percent.toFixed(0)).join(" / "),
      "shards moved in the window": value.moved,
      queues: placement,
      shares: shares(targets, messages)
        .map(
          (share) =>
            `${share.options.producers}+${share.options.consumers} clients, ${share.options.messages} messages`,
        )
        .join(" / "),
    },
  };
}

/** Runs the load's shares at once and returns every message's latency. */
async function runShares(targets: readonly Target[], messages: number): Promise<number[]> {
  return (
    await Promise.all(shares(targets, messages).map((share) => runPipeline(share.address, share.options)))
  ).flat();
}

/**
 * Scenario 1's producers and consumers dealt round the targets, each
 * target's messages in proportion to its producers, so that every share
 * ends at about the same time: an even split for 1 or 2 targets; for 3, four
 * clients of each kind cannot be split evenly, and the first gets two of
 * each and half the messages.
 */
function shares(targets: readonly Target[], messages: number): { address: string; options: PipelineOptions }[] {
  const dealt = (total: number, index: number): number =>
    Math.floor(total / targets.length) + (index < total % targets.length ? 1 : 0);
  const { producers, consumers, batch } = batchedPipelineShape;
  const counts = targets.map((_, index) => Math.floor((messages * dealt(producers, index)) / producers));
  // Rounding's remainder goes to the first share.
  counts[0]! += messages - counts.reduce((total, count) => total + count, 0);
  return targets.map((target, index) => ({
    address: target.address,
    options: {
      queue: target.queue,
      messages: counts[index]!,
      producers: dealt(producers, index),
      consumers: dealt(consumers, index),
      batch,
      ...(target.stay === true ? { followOwnerHints: false } : {}),
    },
  }));
}

function brokersLabel(count: number): string {
  return count === 1 ? "1 broker" : `${count} brokers`;
}

/**
 * Adds to each row its msg/s and CPU per message as ratios to the one-broker
 * row's, and to the forwarded row its brokers' CPU per message less the
 * direct row's of as many brokers: all measured in the same run. `rows`
 * holds one row per entry of `clusters`, in its order.
 */
function withComparisons(rows: readonly ScenarioResult[]): ScenarioResult[] {
  const measured = (index: number): ScenarioResult | undefined =>
    rows[index]?.extra.failed === undefined ? rows[index] : undefined;
  const brokerMicros = (row: ScenarioResult): number => row.brokerCpuMicrosPerMessage ?? NaN;
  const totalMicros = (row: ScenarioResult): number => brokerMicros(row) + Number(row.extra["postgres µs/msg"] ?? NaN);
  const one = measured(clusters.findIndex(({ count, forwarded }) => count === 1 && !forwarded));
  return rows.map((row, index) => {
    const { count, forwarded } = clusters[index]!;
    if (measured(index) === undefined) return row;
    const direct = forwarded
      ? measured(clusters.findIndex((cluster) => cluster.count === count && !cluster.forwarded))
      : undefined;
    return {
      ...row,
      extra: {
        ...row.extra,
        ...(one === undefined
          ? {}
          : {
              "msg/s ratio to 1 broker": row.messagesPerSecond / one.messagesPerSecond,
              "total µs/msg ratio to 1 broker": totalMicros(row) / totalMicros(one),
              "broker µs/msg ratio to 1 broker": brokerMicros(row) / brokerMicros(one),
            }),
        ...(direct === undefined
          ? {}
          : {
              [`broker µs/msg less the direct ${count}-broker row's`]: brokerMicros(row) - brokerMicros(direct),
              [`msg/s ratio to the direct ${count}-broker row`]: row.messagesPerSecond / direct.messagesPerSecond,
            }),
      },
    };
  });
}
