/**
 * Scenario 16, app-shaped: the load of an ordinary service, one message per
 * call, and the same load through RabbitMQ and JetStream in the same run.
 *
 * 32 producers each call the TypeScript client's `QueueClient.send` one
 * message at a time, awaiting each (sharing one QueueClient); one Consumer,
 * on a QueueClient of its own, runs a no-op handler with concurrency 32;
 * 1 KiB bodies, the run's durability (fsync by default). Latency is from
 * just before the send's call to the start of the handler. The window ends
 * once the Consumer has stopped, every ack settled.
 *
 * The peers run the same load, each alone on the machine after holdshelf's
 * broker has stopped (see app-peer-rows.ts), and their rows carry
 * holdshelf's rate, CPU per message and latencies divided by theirs.
 */
import { appLoadShape } from "../app-load.js";
import { jetStreamAppRow, rabbitMqAppRow } from "../app-peer-rows.js";
import { measureBrokerCpuSplit } from "../broker-cpu-split.js";
import { runHoldshelfAppLoad } from "../holdshelf-app-load.js";
import { createQueue } from "../pipeline.js";
import { percentiles, resultOf, type Scenario, type ScenarioResult } from "../scenario.js";

const warmupMessages = 2_000;
const queue = "bench";
// The target for the broker's CPU on this load.
const targetBrokerMicros = 100;

export const appShaped: Scenario = {
  name: "app-shaped",
  sizeMeaning: "messages moved end to end, in each system",
  defaultSize: 30_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    let holdshelf: ScenarioResult;
    try {
      await createQueue(broker.address, queue);
      context.log(`app-shaped: holdshelf warm-up of ${warmupMessages} messages`);
      await runHoldshelfAppLoad(broker.address, { queue, messages: warmupMessages, ...appLoadShape });
      context.log(
        `app-shaped: holdshelf, ${messages} messages, ${appLoadShape.producers} producers, one Consumer of concurrency ${appLoadShape.concurrency}`,
      );
      const { window, value, split } = await measureBrokerCpuSplit(broker, messages, () =>
        runHoldshelfAppLoad(broker.address, { queue, messages, ...appLoadShape }),
      );
      const result = resultOf("16 app-shaped, holdshelf", messages, window, percentiles(value.latencies), {
        client: "QueueClient.send one at a time from each producer; one Consumer, concurrency 32, no-op handler",
        ...split,
        ...(value.redelivered > 0 ? { redelivered: value.redelivered } : {}),
      });
      const met = (result.brokerCpuMicrosPerMessage ?? Infinity) <= targetBrokerMicros;
      holdshelf = { ...result, target: { text: `<= ${targetBrokerMicros} broker µs/msg`, met } };
    } finally {
      // Stopped before the peers start, so that no two servers share the machine (stop() is idempotent).
      await broker.stop();
    }
    const rabbitMq = await rabbitMqAppRow(context, messages, holdshelf);
    const jetStream = await jetStreamAppRow(context, messages, holdshelf);
    return [holdshelf, rabbitMq, jetStream];
  },
};
