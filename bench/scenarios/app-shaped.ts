/**
 * Scenario 16, app-shaped: the load of an ordinary service, one message per
 * call, through holdshelf's client on its default path and on the unary path
 * it replaced, and the same load through RabbitMQ and JetStream in the same
 * run.
 *
 * 32 producers each call the TypeScript client's `QueueClient.send` one
 * message at a time, awaiting each (sharing one QueueClient); one Consumer,
 * on a QueueClient of its own, runs a no-op handler with concurrency 32;
 * 1 KiB bodies, the run's durability (fsync by default). Latency is from
 * just before the send's call to the start of the handler. The window ends
 * once the Consumer has stopped, every ack settled. Each holdshelf row runs
 * on a broker of its own, after a warm-up.
 *
 * The peers run the same load, each alone on the machine after holdshelf's
 * brokers have stopped (see app-peer-rows.ts), and their rows carry the
 * default path's rate, CPU per message and latencies divided by theirs.
 */
import { appLoadShape } from "../app-load.js";
import { jetStreamAppRow, rabbitMqAppRow } from "../app-peer-rows.js";
import { measureBrokerCpuSplit } from "../broker-cpu-split.js";
import { runHoldshelfAppLoad, type HoldshelfClientPath } from "../holdshelf-app-load.js";
import { createQueue } from "../pipeline.js";
import { percentiles, resultOf, type Scenario, type ScenarioContext, type ScenarioResult } from "../scenario.js";

const warmupMessages = 2_000;
const queue = "bench";
// The target for the broker's CPU on this load.
const targetBrokerMicros = 100;

export const appShaped: Scenario = {
  name: "app-shaped",
  sizeMeaning: "messages moved end to end, in each system and on each of holdshelf's paths",
  defaultSize: 30_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const streaming = await holdshelfRow(context, messages, "default");
    const unary = await holdshelfRow(context, messages, "unary");
    const ratio = (ours: number | undefined, theirs: number | undefined): number =>
      ours === undefined || theirs === undefined ? NaN : Number((ours / theirs).toFixed(2));
    const met = (streaming.brokerCpuMicrosPerMessage ?? Infinity) <= targetBrokerMicros;
    const holdshelf: ScenarioResult = {
      ...streaming,
      extra: {
        ...streaming.extra,
        rateOverUnary: ratio(streaming.messagesPerSecond, unary.messagesPerSecond),
        brokerCpuOverUnary: ratio(streaming.brokerCpuMicrosPerMessage, unary.brokerCpuMicrosPerMessage),
        clientCpuOverUnary: ratio(streaming.clientCpuMicrosPerMessage, unary.clientCpuMicrosPerMessage),
      },
      target: { text: `<= ${targetBrokerMicros} broker µs/msg`, met },
    };
    const rabbitMq = await rabbitMqAppRow(context, messages, holdshelf);
    const jetStream = await jetStreamAppRow(context, messages, holdshelf);
    return [holdshelf, unary, rabbitMq, jetStream];
  },
};

const paths: Record<HoldshelfClientPath, { row: string; client: string }> = {
  default: {
    row: "16 app-shaped, holdshelf",
    client: "sends gathered into SendBatch (the client's default), Consumer on Subscribe",
  },
  unary: {
    row: "16 app-shaped, holdshelf unary path",
    client: "a Send per send (batching delayMs 0), Consumer on Receive + Heartbeat + Delete (subscribe: false)",
  },
};

/** One holdshelf row on a broker of its own, stopped before the next row starts. */
async function holdshelfRow(
  context: ScenarioContext,
  messages: number,
  path: HoldshelfClientPath,
): Promise<ScenarioResult> {
  const broker = await context.startBroker();
  try {
    await createQueue(broker.address, queue);
    context.log(`app-shaped: holdshelf (${path} path) warm-up of ${warmupMessages} messages`);
    await runHoldshelfAppLoad(broker.address, { queue, messages: warmupMessages, ...appLoadShape }, path);
    context.log(
      `app-shaped: holdshelf (${path} path), ${messages} messages, ${appLoadShape.producers} producers, one Consumer of concurrency ${appLoadShape.concurrency}`,
    );
    const { window, value, split } = await measureBrokerCpuSplit(broker, messages, () =>
      runHoldshelfAppLoad(broker.address, { queue, messages, ...appLoadShape }, path),
    );
    return resultOf(paths[path].row, messages, window, percentiles(value.latencies), {
      client: paths[path].client,
      ...split,
      ...(value.redelivered > 0 ? { redelivered: value.redelivered } : {}),
    });
  } finally {
    // Stopped before anything else starts, so that no two servers share the machine (stop() is idempotent).
    await broker.stop();
  }
}
