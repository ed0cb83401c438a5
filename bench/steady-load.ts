import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createQueueServiceRpc } from "../src/client/rpc-client.js";
import { bodyBytes } from "./message-bodies.js";
import { monotonicMs } from "./proc-stats.js";

/** A steady load's shape: sends at a fixed rate, whatever the answers' latency, and consumers keeping up. */
export interface SteadyLoadOptions {
  readonly queue: string;
  /** Sends a second, each a Send of one 1 KiB message, started on schedule (an open loop). */
  readonly rate: number;
  readonly seconds: number;
  /** Consumers, each a loop of Receive (up to 10, long-polling 1 s) and DeleteBatch of what it got. */
  readonly consumers: number;
}

/** What a steady load did: the messages it moved and each call's latency, in milliseconds. */
export interface SteadyLoadResult {
  readonly messages: number;
  readonly sendMs: number[];
  readonly receiveMs: number[];
  readonly deleteMs: number[];
}

/**
 * Sends `rate` messages a second for `seconds` and consumes them all,
 * timing every call: the latencies a broker's callers see at a load it
 * keeps up with, rather than the queueing of a saturating closed loop.
 */
export async function runSteadyLoad(address: string, options: SteadyLoadOptions): Promise<SteadyLoadResult> {
  const { queue, rate, seconds, consumers } = options;
  const total = Math.round(rate * seconds);
  const body = Buffer.alloc(bodyBytes, 0x61);
  const producer = createQueueServiceRpc(address);
  const consumerRpcs = Array.from({ length: consumers }, () => createQueueServiceRpc(address));
  const result: SteadyLoadResult = { messages: total, sendMs: [], receiveMs: [], deleteMs: [] };
  let consumed = 0;
  const timed = async <T>(into: number[], call: () => Promise<T>): Promise<T> => {
    const startedMs = monotonicMs();
    const value = await call();
    into.push(monotonicMs() - startedMs);
    return value;
  };
  try {
    const sends: Promise<unknown>[] = [];
    const startedMs = monotonicMs();
    const produce = (async () => {
      for (let sent = 0; sent < total; ) {
        const due = Math.min(total, Math.floor(((monotonicMs() - startedMs) / 1000) * rate));
        for (; sent < due; sent++) sends.push(timed(result.sendMs, () => producer.send({ queue, body })));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(sends);
    })();
    const consume = consumerRpcs.map(async (rpc) => {
      while (consumed < total) {
        const { messages } = await timed(result.receiveMs, () =>
          rpc.receive({
            queue,
            maxMessages: 10,
            waitTime: durationFromMs(1000),
            visibilityTimeout: durationFromMs(60_000),
          }),
        );
        if (messages.length === 0) continue;
        consumed += messages.length;
        await timed(result.deleteMs, () =>
          rpc.deleteBatch({ queue, receiptHandles: messages.map((message) => message.receiptHandle) }),
        );
      }
    });
    await Promise.all([produce, ...consume]);
    return result;
  } finally {
    producer.close();
    for (const rpc of consumerRpcs) rpc.close();
  }
}
