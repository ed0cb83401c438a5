/**
 * The app-shaped load through one RabbitMQ queue over AMQP 0-9-1 (amqplib),
 * as a service would use it: producers share one connection, each with a
 * confirm channel of its own, publishing one persistent message at a time
 * and awaiting its confirm; one consumer, on a connection of its own, with
 * a prefetch of the load's concurrency, acking each message alone.
 */
import { connect, type ChannelModel } from "amqplib";
import { countArrivals, runProducers, type AppLoadOptions, type AppLoadOutcome } from "./app-load.js";
import { ageOf, timedBody } from "./message-bodies.js";

/**
 * Publishes and consumes `messages` messages, and returns every message's
 * latency: from just before its publish to its delivery to the consumer's
 * callback (the handler's start). AMQP has no answer to an ack, so the run
 * ends when every message has arrived and the consumer's channel has closed
 * (the server has taken its acks by then).
 */
export async function runAmqpAppLoad(url: string, options: AppLoadOptions): Promise<AppLoadOutcome> {
  const { queue } = options;
  const models: ChannelModel[] = [];
  try {
    const publishing = await connect(url);
    models.push(publishing);
    const consuming = await connect(url);
    models.push(consuming);
    const channels = await Promise.all(
      Array.from({ length: options.producers }, () => publishing.createConfirmChannel()),
    );
    const consumer = await consuming.createChannel();
    await consumer.prefetch(options.concurrency);
    const arrivals = countArrivals(options.messages);
    const { consumerTag } = await consumer.consume(
      queue,
      (message) => {
        // null: the server cancelled the consumer (the queue was deleted).
        if (message === null) return;
        arrivals.arrived(ageOf(message.content), message.fields.redelivered);
        consumer.ack(message);
      },
      { noAck: false },
    );
    await runProducers(
      options,
      (producer) =>
        new Promise<void>((resolve, reject) => {
          channels[producer]!.sendToQueue(queue, timedBody(), { persistent: true }, (error: unknown) =>
            error === null || error === undefined ? resolve() : reject(error),
          );
        }),
    );
    await arrivals.all;
    await consumer.cancel(consumerTag);
    await consumer.close();
    await Promise.all(channels.map((channel) => channel.close()));
    return arrivals.outcome();
  } finally {
    await Promise.all(models.map((model) => model.close().catch(() => undefined)));
  }
}
