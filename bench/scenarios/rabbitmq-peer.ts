/**
 * Scenario 8, the second peer comparison: scenario 1's workload against
 * RabbitMQ on the same machine in the same run, and holdshelf's rate divided
 * by RabbitMQ's. Where JetStream (scenario 7) cannot fsync each write in
 * Debian's version, RabbitMQ's quorum queue can and does: it is the durable
 * peer.
 *
 * One quorum queue (durable, replicated by Raft; here one node, so one
 * replica), publisher confirms, a consumer prefetch of 100 and manual acks;
 * 4 producers and 4 consumers, each on a connection of its own, moving 1 KiB
 * timed bodies (see amqp-pipeline.ts for how batches map to AMQP). Latency
 * is from just before the publish to the delivery.
 *
 * The bench starts its own node (rabbitmq-server-child.ts) and stops it
 * after the row. Skipped, with one row saying why, where RabbitMQ is not
 * installed.
 */
import { runAmqpPipeline } from "../amqp-pipeline.js";
import { declareQuorumQueue, queuedMessages } from "../amqp-queue.js";
import { holdshelfRate } from "../holdshelf-rate.js";
import { measurePeer, peerRow } from "../peer-row.js";
import { findRabbitMq, startRabbitMq } from "../rabbitmq-server-child.js";
import { skippedRow, type Scenario } from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const warmupMessages = 5_000;
const queue = "bench";
const targetRatio = 2;

export const rabbitMqPeer: Scenario = {
  name: "rabbitmq",
  sizeMeaning: "messages moved end to end, in each system",
  defaultSize: 200_000,
  async run(context) {
    const install = await findRabbitMq();
    if (install === undefined) {
      context.log("rabbitmq: skipped, rabbitmq-server is not installed");
      return [
        skippedRow("8 RabbitMQ peer", "rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server)"),
      ];
    }
    const holdshelf = await holdshelfRate(context, "rabbitmq");
    const messages = context.size ?? this.defaultSize;

    context.log("rabbitmq: starting a node");
    const server = await startRabbitMq(install, await context.tempDir());
    try {
      await declareQuorumQueue(server.url, queue);
      context.log(`rabbitmq: RabbitMQ ${server.version} (quorum queue): warm-up of ${warmupMessages} messages`);
      await runAmqpPipeline(server.url, { queue, messages: warmupMessages, ...batchedPipelineShape });
      context.log(
        `rabbitmq: ${messages} messages, ${batchedPipelineShape.producers} producers and ${batchedPipelineShape.consumers} consumers`,
      );

      const window = await measurePeer(server.pid, () =>
        runAmqpPipeline(server.url, { queue, messages, ...batchedPipelineShape }),
      );
      const { outcome } = window;
      const leftInQueue = await queuedMessages(server.url, queue);
      if (outcome.redelivered > 0 || leftInQueue > 0) {
        context.log(`rabbitmq: ${outcome.redelivered} messages redelivered, ${leftInQueue} left in the queue`);
      }
      return [
        peerRow(window, {
          scenario: `8 RabbitMQ ${server.version.split(" ")[0]} (quorum queue)`,
          peer: "RabbitMQ",
          messages,
          latencies: outcome.latencies,
          holdshelf,
          holdshelfDurability: context.durability,
          targetRatio,
          extra: {
            rabbitMqDurability: "quorum queue: confirmed once in the Raft log and fsynced",
            publish: `${batchedPipelineShape.batch} persistent, then waitForConfirms`,
            acks: `manual, prefetch ${batchedPipelineShape.batch}, one multiple-ack per burst of deliveries`,
            rabbitmq: `RabbitMQ ${server.version}`,
            ...(outcome.redelivered > 0 ? { redelivered: outcome.redelivered } : {}),
            ...(leftInQueue > 0 ? { leftInQueue } : {}),
          },
        }),
      ];
    } finally {
      context.log("rabbitmq: stopping the node");
      await server.stop();
    }
  },
};
