/**
 * Scenario 1's load through one RabbitMQ queue over AMQP 0-9-1 (amqplib):
 * producers publish a batch and wait for its confirms, consumers take pushed
 * deliveries under a prefetch limit and ack them.
 */
import { once } from "node:events";
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from "amqplib";
import { ageOf, timedBody } from "./message-bodies.js";

/** The shape of an AMQP load: scenario 1's. */
export interface AmqpPipelineOptions {
  readonly queue: string;
  readonly messages: number;
  readonly producers: number;
  readonly consumers: number;
  /** Messages published before waiting for their confirms, and each consumer's prefetch. */
  readonly batch: number;
}

/** What an AMQP run delivered: each message's latency, and how many came as redeliveries (none should). */
export interface AmqpPipelineOutcome {
  readonly latencies: number[];
  readonly redelivered: number;
}

/**
 * Publishes and consumes `messages` messages concurrently, each producer and
 * consumer on a connection of its own, and returns every message's latency:
 * from just before its publish to its delivery to a consumer.
 *
 * - A producer publishes `batch` persistent messages on a confirm channel,
 *   then waits until the server has confirmed them all (for a quorum queue:
 *   written to its Raft log and fsynced), as SendBatch waits for its commit.
 * - A consumer has a prefetch of `batch` and acks manually, with
 *   `multiple` for every delivery that has arrived so far, once per burst of
 *   deliveries (one turn of the event loop): like one DeleteBatch for what one
 *   Receive returned, at most `batch` messages in one frame. Acking one by
 *   one would cost RabbitMQ a frame and a Raft command per message where
 *   holdshelf gets one RPC per hundred; acking only every 100th delivery
 *   would stall at the end, when fewer than 100 are left for a consumer.
 *   AMQP has no answer to an ack, so the run ends when every message has
 *   arrived and every consumer's channel has closed (the server has taken
 *   its acks by then).
 */
export async function runAmqpPipeline(url: string, options: AmqpPipelineOptions): Promise<AmqpPipelineOutcome> {
  const { queue, messages, batch } = options;
  const connections: ChannelModel[] = [];
  const connection = async (): Promise<ChannelModel> => {
    const model = await connect(url);
    connections.push(model);
    return model;
  };
  const latencies: number[] = [];
  let redelivered = 0;
  let claimed = 0;
  let allArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (allArrived = resolve));

  const produce = async (model: ChannelModel): Promise<void> => {
    const channel = await model.createConfirmChannel();
    while (claimed < messages) {
      const count = Math.min(batch, messages - claimed);
      claimed += count;
      for (let i = 0; i < count; i++) {
        // false: the socket's buffer is full; wait for it rather than buffer without bound.
        if (!channel.sendToQueue(queue, timedBody(), { persistent: true })) await once(channel, "drain");
      }
      await channel.waitForConfirms();
    }
    await channel.close();
  };
  const consume = async (model: ChannelModel): Promise<void> => {
    const channel: Channel = await model.createChannel();
    await channel.prefetch(batch);
    let last: ConsumeMessage | undefined;
    const ackSoFar = (): void => {
      if (last !== undefined) channel.ack(last, true);
      last = undefined;
    };
    const { consumerTag } = await channel.consume(
      queue,
      (message) => {
        // null: the server cancelled the consumer (the queue was deleted).
        if (message === null) return;
        latencies.push(ageOf(message.content));
        if (message.fields.redelivered) redelivered++;
        if (last === undefined) setImmediate(ackSoFar);
        last = message;
        if (latencies.length >= messages) allArrived();
      },
      { noAck: false },
    );
    await arrived;
    ackSoFar();
    await channel.cancel(consumerTag);
    await channel.close();
  };

  try {
    const producers = await Promise.all(Array.from({ length: options.producers }, connection));
    const consumers = await Promise.all(Array.from({ length: options.consumers }, connection));
    await Promise.all([...producers.map(produce), ...consumers.map(consume)]);
  } finally {
    await Promise.all(connections.map((model) => model.close().catch(() => undefined)));
  }
  return { latencies, redelivered };
}
