import { createQueue, runPipeline } from "../pipeline.js";
import { measureWindow, percentiles, resultOf, type Scenario } from "../scenario.js";

/** Producers and consumers of the batched pipeline, as the issue sets them. */
export const batchedPipelineShape = { producers: 4, consumers: 4, batch: 100 } as const;
const warmupMessages = 5_000;
const targetPerSecond = 20_000;
// Broker CPU per message: half of what JetStream's server spends.
const targetBrokerMicros = 30;

/**
 * Scenario 1: producers SendBatch 100, consumers Receive up to 100 and
 * DeleteBatch, concurrently; end-to-end messages per second.
 */
export const batchedPipeline: Scenario = {
  name: "batched",
  sizeMeaning: "messages moved end to end",
  defaultSize: 200_000,
  async run(context) {
    const broker = await context.startBroker();
    await createQueue(broker.address, "bench");
    context.log(`batched: warm-up of ${warmupMessages} messages`);
    await runPipeline(broker.address, { queue: "bench", messages: warmupMessages, ...batchedPipelineShape });
    const messages = context.size ?? this.defaultSize;
    context.log(
      `batched: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`,
    );
    const { window, value: latencies } = await measureWindow(broker, () =>
      runPipeline(broker.address, { queue: "bench", messages, ...batchedPipelineShape }),
    );
    const result = resultOf("1 batched pipeline", messages, window, percentiles(latencies));
    const met =
      result.messagesPerSecond >= targetPerSecond &&
      (result.brokerCpuMicrosPerMessage ?? Infinity) <= targetBrokerMicros;
    return [
      { ...result, target: { text: `>= ${targetPerSecond} msg/s, <= ${targetBrokerMicros} broker µs/msg`, met } },
    ];
  },
};
