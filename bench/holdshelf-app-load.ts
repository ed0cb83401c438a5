/**
 * The app-shaped load through holdshelf's own TypeScript client, as a
 * service would use it: producers share one QueueClient and call `send` one
 * message at a time; one Consumer, on a QueueClient of its own, runs a no-op
 * handler with the load's concurrency.
 */
import { QueueClient } from "../src/client/queue-client.js";
import { countArrivals, runProducers, type AppLoadOptions, type AppLoadOutcome } from "./app-load.js";
import { ageOf, timedBody } from "./message-bodies.js";

// Long enough that no lease is renewed or runs out during a run.
const visibilityTimeoutMs = 60_000;

/**
 * Sends and handles `messages` messages, and returns every message's
 * latency: from just before its `send` call to the start of its handler.
 * Resolves once the Consumer has stopped, so every ack is settled inside
 * the run. Consumer errors reject it.
 */
export async function runHoldshelfAppLoad(address: string, options: AppLoadOptions): Promise<AppLoadOutcome> {
  const publisher = new QueueClient(address);
  const subscriber = new QueueClient(address);
  const arrivals = countArrivals(options.messages);
  const errors: unknown[] = [];
  const consumer = subscriber.consume(
    options.queue,
    (message) => arrivals.arrived(ageOf(message.body), message.receiveCount > 1),
    { concurrency: options.concurrency, visibilityTimeoutMs, onError: (error) => errors.push(error) },
  );
  try {
    await runProducers(options, () => publisher.send(options.queue, timedBody()));
    await arrivals.all;
  } finally {
    await consumer.stop();
    // close() flushes what a batching client still holds; nothing should be left by now.
    await Promise.resolve(publisher.close());
    subscriber.close();
  }
  if (errors.length > 0) throw new Error(`the holdshelf consumer reported ${errors.length} errors: ${errors[0]}`);
  return arrivals.outcome();
}
