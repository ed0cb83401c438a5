/**
 * Scenario 9: more than one core, the simplest way. Two broker processes,
 * each with its own data directory and one queue, as two processes that own
 * a shard of the queues each would be; scenario 1's load (4 producers
 * SendBatch 100, 4 consumers Receive 100 and DeleteBatch) split evenly over
 * them, all at once, from this one client process. Reports the total rate,
 * the CPU of both brokers together per message, and the ratio to scenario 1
 * in the same run (one process): whether a second process buys anything on
 * this machine, whose two cores the client shares.
 */
import { createQueue, runPipeline } from "../pipeline.js";
import { measureBrokersWindow, percentiles, resultOf, type BenchBroker, type Scenario } from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const queue = "bench";
const shards = 2;
const warmupMessages = 5_000;

export const shardedBrokers: Scenario = {
  name: "shards",
  sizeMeaning: "messages moved end to end, split over the processes",
  defaultSize: 200_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const brokers: BenchBroker[] = [];
    for (let shard = 0; shard < shards; shard++) brokers.push(await context.startBroker());
    for (const broker of brokers) await createQueue(broker.address, queue);
    const share = {
      queue,
      batch: batchedPipelineShape.batch,
      producers: batchedPipelineShape.producers / shards,
      consumers: batchedPipelineShape.consumers / shards,
    };
    context.log(`shards: warm-up of ${warmupMessages} messages on each of ${shards} brokers`);
    await Promise.all(brokers.map((broker) => runPipeline(broker.address, { ...share, messages: warmupMessages })));

    context.log(
      `shards: ${messages} messages over ${shards} brokers, ${share.producers} producers and ${share.consumers} consumers each`,
    );
    const { window, value: latencies } = await measureBrokersWindow(brokers, async () =>
      (
        await Promise.all(
          brokers.map((broker) => runPipeline(broker.address, { ...share, messages: messages / shards })),
        )
      ).flat(),
    );
    const result = resultOf(`9 sharded: ${shards} broker processes`, messages, window, percentiles(latencies));
    const single = context.earlier.find((row) => row.scenario.startsWith("1 "));
    const ratio = single === undefined ? undefined : result.messagesPerSecond / single.messagesPerSecond;
    // No target: the issue asks for the measurement, and an argument from it for larger machines.
    return [{ ...result, extra: ratio === undefined ? {} : { "msg/s ratio to one process (scenario 1)": ratio } }];
  },
};
