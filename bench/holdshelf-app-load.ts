/**
 * The app-shaped load through holdshelf's own TypeScript client, as a
 * service would use it: producers share one QueueClient and call `send` one
 * message at a time; one Consumer, on a QueueClient of its own, runs a no-op
 * handler with the load's concurrency.
 */
import { QueueClient } from "../src/client/queue-client.js";
import { countArrivals, runProducers, type AppLoadOptions, type AppLoadOutcome } from "./app-load.js";
import { ageOf, timedBody } from "./message-bodies.js";

/**
 * Which of the client's paths a run takes: its defaults (sends gathered
 * into SendBatch calls, the Consumer on a Subscribe stream), or the unary
 * path they replaced (each send a Send; the Consumer on Receive, Heartbeat
 * and Delete).
 */
export type HoldshelfClientPath = "default" | "unary";

// Long enough that no lease is renewed or runs out during a run.
const visibilityTimeoutMs = 60_000;

/**
 * Sends and handles `messages` messages, and returns every message's
 * latency: from just before its `send` call to the start of its handler.
 * Resolves once the Consumer has stopped, so every ack is settled inside
 * the run. Consumer errors reject it.
 */
export async function runHoldshelfAppLoad(
  address: string,
  options: AppLoadOptions,
  path: HoldshelfClientPath,
): Promise<AppLoadOutcome> {
  const unary = path === "unary";
  const publisher = new QueueClient(address, unary ? { batching: { delayMs: 0 } } : {});
  const subscriber = new QueueClient(address);
  const arrivals = countArrivals(options.messages);
  const errors: unknown[] = [];
  const consumer = subscriber.consume(
    options.queue,
    (message) => arrivals.arrived(ageOf(message.body), message.receiveCount > 1),
    {
      concurrency: options.concurrency,
      visibilityTimeoutMs,
      subscribe: !unary,
      onError: (error) => errors.push(error),
    },
  );
  try {
    await runProducers(options, () => publisher.send(options.queue, timedBody()));
    await arrivals.all;
  } finally {
    await consumer.stop();
    await publisher.close();
    await subscriber.close();
  }
  if (errors.length > 0) throw new Error(`the holdshelf consumer reported ${errors.length} errors: ${errors[0]}`);
  return arrivals.outcome();
}
