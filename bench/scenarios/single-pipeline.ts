import { createQueue, runPipeline } from "../pipeline.js";
import { measureWindow, percentiles, resultOf, type Scenario } from "../scenario.js";

const shape = { producers: 32, consumers: 32, batch: 1 } as const;
const warmupMessages = 1_000;
const targetPerSecond = 3_000;

/**
 * Scenario 2: 32 concurrent producers (Send) and 32 consumers (Receive 1,
 * Delete 1); end-to-end messages per second. Every call waits for its own
 * durable write, so this measures how well group commit shares fsyncs.
 */
export const singlePipeline: Scenario = {
  name: "single",
  sizeMeaning: "messages moved end to end",
  defaultSize: 20_000,
  async run(context) {
    const broker = await context.startBroker();
    await createQueue(broker.address, "bench");
    await runPipeline(broker.address, { queue: "bench", messages: warmupMessages, ...shape });
    const messages = context.size ?? this.defaultSize;
    context.log(`single: ${messages} messages, ${shape.producers} producers and ${shape.consumers} consumers`);
    const { window, value: latencies } = await measureWindow(broker, () =>
      runPipeline(broker.address, { queue: "bench", messages, ...shape }),
    );
    const result = resultOf("2 single-message pipeline", messages, window, percentiles(latencies));
    return [
      { ...result, target: { text: `>= ${targetPerSecond} msg/s`, met: result.messagesPerSecond >= targetPerSecond } },
    ];
  },
};
