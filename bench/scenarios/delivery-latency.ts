/**
 * Scenario 17, delivery latency: a producer calls the TypeScript client's
 * `QueueClient.send` (its defaults: sends gathered into SendBatch calls) at
 * a steady 500 messages a second (open loop: on schedule, not after the
 * previous send returns) while one Consumer, on a QueueClient of its own,
 * waits on its Subscribe stream with concurrency 32 and a no-op handler.
 * The latency is from the send's return to the start of the handler that
 * got the message; one that starts before its send has returned is
 * negative, and kept.
 */
import { QueueClient } from "../../src/client/queue-client.js";
import { appLoadShape } from "../app-load.js";
import { bodyBytes } from "../message-bodies.js";
import { createQueue } from "../pipeline.js";
import { monotonicMs } from "../proc-stats.js";
import { measureWindow, percentiles, resultOf, type Scenario } from "../scenario.js";

const queue = "bench";
const ratePerSecond = 500;
const warmupSeconds = 3;
const targetP99Ms = 5;
// Long enough that no lease is renewed or runs out during a run.
const visibilityTimeoutMs = 60_000;

export const deliveryLatency: Scenario = {
  name: "delivery-latency",
  sizeMeaning: "messages sent at the fixed rate",
  defaultSize: 10_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    await createQueue(broker.address, queue);
    const rig = openRig(broker.address);
    try {
      // Cold channels and unoptimized code make the first seconds' latencies far above the rest.
      context.log(`delivery-latency: warm-up of ${warmupSeconds} s at ${ratePerSecond}/s`);
      await rig.sendAtRate(Math.ceil(ratePerSecond * warmupSeconds), ratePerSecond);
      context.log(`delivery-latency: ${messages} messages at ${ratePerSecond}/s`);
      const { window, value: latencies } = await measureWindow(broker, () => rig.sendAtRate(messages, ratePerSecond));
      const result = resultOf("17 delivery latency", messages, window, percentiles(latencies), {
        sendRatePerSecond: ratePerSecond,
        measured: "send's return to the handler's start",
      });
      return [{ ...result, target: { text: `p99 < ${targetP99Ms} ms`, met: result.latencyMs!.p99 < targetP99Ms } }];
    } finally {
      await rig.close();
    }
  },
};

/** A producer and a waiting Consumer, kept across the warm-up and the measured run. */
interface Rig {
  /** Sends `messages` at `rate` a second; resolves with each one's latency once every one has reached the handler. */
  sendAtRate(messages: number, rate: number): Promise<number[]>;
  close(): Promise<void>;
}

function openRig(address: string): Rig {
  const publisher = new QueueClient(address);
  const subscriber = new QueueClient(address);
  const startedAt = new Map<string, number>();
  let arrived: (() => void) | undefined;
  const errors: unknown[] = [];
  const consumer = subscriber.consume(
    queue,
    (message) => {
      startedAt.set(message.messageId, monotonicMs());
      arrived?.();
    },
    { concurrency: appLoadShape.concurrency, visibilityTimeoutMs, onError: (error) => errors.push(error) },
  );
  const body = Buffer.alloc(bodyBytes, 0x61);
  return {
    async sendAtRate(messages, rate) {
      const returnedAt = new Map<string, number>();
      const sends: Promise<void>[] = [];
      const startedMs = monotonicMs();
      for (let sent = 0; sent < messages; ) {
        const due = Math.min(messages, Math.floor(((monotonicMs() - startedMs) * rate) / 1000) + 1);
        for (; sent < due; sent++) {
          sends.push(publisher.send(queue, body).then((id) => void returnedAt.set(id, monotonicMs())));
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await Promise.all(sends);
      while ([...returnedAt.keys()].some((id) => !startedAt.has(id))) {
        await new Promise<void>((resolve) => (arrived = resolve));
      }
      if (errors.length > 0) throw new Error(`the consumer reported ${errors.length} errors: ${errors[0]}`);
      return [...returnedAt].map(([id, at]) => startedAt.get(id)! - at);
    },
    async close() {
      await consumer.stop();
      await publisher.close();
      await subscriber.close();
    },
  };
}
