/**
 * The peers' rows of the app-shaped scenario (16): RabbitMQ and JetStream
 * on the same load, in the same run, each started after holdshelf's broker
 * has stopped and stopped before the next starts, so that none shares the
 * machine with another. Each row carries holdshelf's figures divided by the
 * peer's.
 */
import { runAmqpAppLoad } from "./amqp-app-load.js";
import { declareQuorumQueue, queuedMessages } from "./amqp-queue.js";
import { appLoadShape, type AppLoadOptions } from "./app-load.js";
import { appStreamMessages, createAppStream, runJetStreamAppLoad } from "./jetstream-app-load.js";
import {
  findNatsServer,
  natsConfigProblem,
  natsServerVersion,
  startNatsServer,
  writeNatsConfig,
} from "./nats-server-child.js";
import { measurePeer, peerRow } from "./peer-row.js";
import { findRabbitMq, startRabbitMq } from "./rabbitmq-server-child.js";
import { skippedRow, type ScenarioContext, type ScenarioResult } from "./scenario.js";

const warmupMessages = 2_000;
const queue = "app";
const stream = "APP";
// The target: twice RabbitMQ's rate on this load. It sets none against JetStream.
const rabbitMqTargetRatio = 2;

/** Runs the load through a RabbitMQ quorum queue; one row, or a skipped row where RabbitMQ is not installed. */
export async function rabbitMqAppRow(
  context: ScenarioContext,
  messages: number,
  holdshelf: ScenarioResult,
): Promise<ScenarioResult> {
  const install = await findRabbitMq();
  if (install === undefined) {
    context.log("app-shaped: RabbitMQ skipped, rabbitmq-server is not installed");
    return skippedRow("16 app-shaped, RabbitMQ", "rabbitmq-server is not installed");
  }
  context.log("app-shaped: starting a RabbitMQ node");
  const server = await startRabbitMq(install, await context.tempDir());
  try {
    await declareQuorumQueue(server.url, queue);
    const load = (count: number): AppLoadOptions => ({ queue, messages: count, ...appLoadShape });
    context.log(`app-shaped: RabbitMQ ${server.version} (quorum queue): warm-up of ${warmupMessages} messages`);
    await runAmqpAppLoad(server.url, load(warmupMessages));
    context.log(`app-shaped: RabbitMQ, ${messages} messages`);
    const window = await measurePeer(server.pid, () => runAmqpAppLoad(server.url, load(messages)));
    const leftInQueue = await queuedMessages(server.url, queue);
    const { redelivered } = window.outcome;
    const row = peerRow(window, {
      scenario: `16 app-shaped, RabbitMQ ${server.version.split(" ")[0]} (quorum queue)`,
      peer: "RabbitMQ",
      messages,
      latencies: window.outcome.latencies,
      holdshelf: { rate: holdshelf.messagesPerSecond, source: "holdshelf's row of this run" },
      holdshelfDurability: context.durability,
      targetRatio: rabbitMqTargetRatio,
      extra: {
        rabbitMqDurability: "quorum queue: confirmed once in the Raft log and fsynced",
        publish:
          "persistent, one at a time, each awaiting its confirm; a confirm channel per producer on one connection",
        acks: `manual, prefetch ${appLoadShape.concurrency}, one ack per message`,
        rabbitmq: `RabbitMQ ${server.version}`,
        ...(redelivered > 0 ? { redelivered } : {}),
        ...(leftInQueue > 0 ? { leftInQueue } : {}),
      },
    });
    return withRatios(row, holdshelf);
  } finally {
    context.log("app-shaped: stopping the RabbitMQ node");
    await server.stop();
  }
}

/**
 * Runs the load through JetStream, with an fsync on every write where the
 * server has it (nats-server 2.10 and later) and its default otherwise; one
 * row, or a skipped row where nats-server is not installed.
 */
export async function jetStreamAppRow(
  context: ScenarioContext,
  messages: number,
  holdshelf: ScenarioResult,
): Promise<ScenarioResult> {
  const bin = await findNatsServer();
  if (bin === undefined) {
    context.log("app-shaped: JetStream skipped, nats-server is not installed");
    return skippedRow("16 app-shaped, JetStream", "nats-server is not installed");
  }
  const version = await natsServerVersion(bin);
  const configDir = await context.tempDir();
  const storeDir = await context.tempDir();
  let configFile = await writeNatsConfig(configDir, storeDir, "always");
  const problem = await natsConfigProblem(bin, configFile);
  if (problem !== undefined) configFile = await writeNatsConfig(configDir, storeDir, "default");
  const durability =
    problem === undefined
      ? "fsync on every write"
      : `OS page cache, forced sync every 2 minutes (no fsync per write in nats-server ${version})`;
  const server = await startNatsServer(bin, configFile);
  try {
    const load = (count: number): AppLoadOptions => ({ queue: stream, messages: count, ...appLoadShape });
    await createAppStream(server.url, stream, appLoadShape.concurrency);
    context.log(`app-shaped: JetStream ${version} (file, ${durability}): warm-up of ${warmupMessages} messages`);
    await runJetStreamAppLoad(server.url, load(warmupMessages));
    // A fresh consumer: the warm-up's may still have a pull request waiting on the server.
    await createAppStream(server.url, stream, appLoadShape.concurrency);
    context.log(`app-shaped: JetStream, ${messages} messages`);
    const window = await measurePeer(server.pid, () => runJetStreamAppLoad(server.url, load(messages)));
    const leftInStream = await appStreamMessages(server.url, stream);
    const { redelivered } = window.outcome;
    const row = peerRow(window, {
      scenario: `16 app-shaped, JetStream ${version} (file, ${problem === undefined ? "fsync" : "no fsync"})`,
      peer: "JetStream",
      messages,
      latencies: window.outcome.latencies,
      holdshelf: { rate: holdshelf.messagesPerSecond, source: "holdshelf's row of this run" },
      holdshelfDurability: context.durability,
      targetRatio: undefined,
      extra: {
        jetStreamDurability: durability,
        publish: "one at a time, each awaiting its PubAck; every producer on one connection",
        acks: `ackAck (server-confirmed) per message, max_ack_pending ${appLoadShape.concurrency}`,
        nats: `nats-server ${version}`,
        ...(redelivered > 0 ? { redelivered } : {}),
        ...(leftInStream > 0 ? { leftInStream } : {}),
      },
    });
    return withRatios(row, holdshelf);
  } finally {
    await server.stop();
  }
}

/** A peer's row with holdshelf's CPU per message and latencies divided by the peer's (below 1: holdshelf's are lower). */
function withRatios(peer: ScenarioResult, holdshelf: ScenarioResult): ScenarioResult {
  const ratio = (ours: number | undefined, theirs: number | undefined): number =>
    ours === undefined || theirs === undefined ? NaN : Number((ours / theirs).toFixed(2));
  return {
    ...peer,
    extra: {
      ...peer.extra,
      brokerCpuRatio: ratio(holdshelf.brokerCpuMicrosPerMessage, peer.brokerCpuMicrosPerMessage),
      clientCpuRatio: ratio(holdshelf.clientCpuMicrosPerMessage, peer.clientCpuMicrosPerMessage),
      p50Ratio: ratio(holdshelf.latencyMs?.p50, peer.latencyMs?.p50),
      p99Ratio: ratio(holdshelf.latencyMs?.p99, peer.latencyMs?.p99),
    },
  };
}
