import { durationFromMs } from "@bufbuild/protobuf/wkt";
import type { ReceivedMessage } from "../gen/holdshelf/v1/message_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../src/client/rpc-client.js";
import { bodyBytes } from "./message-bodies.js";
import { monotonicMs } from "./proc-stats.js";

// Filling and draining queues fast, with progress lines: the set-up phases of
// the scenarios that need many messages in place before they measure.

/** Progress of a long phase, logged every few seconds. */
export interface Progress {
  add(count: number): void;
  /** Stops logging; the seconds since the progress began. */
  seconds(): number;
}

/** Logs `what: done / total (rate/s)` every `everyMs` until seconds() is called. */
export function progressLog(log: (line: string) => void, what: string, total: number, everyMs = 5_000): Progress {
  const startedMs = monotonicMs();
  let done = 0;
  let stoppedMs: number | undefined;
  const timer = setInterval(() => {
    const seconds = (monotonicMs() - startedMs) / 1000;
    log(`${what} ${done} of ${total} (${Math.round(done / seconds)}/s)`);
  }, everyMs);
  timer.unref();
  return {
    add(count) {
      done += count;
    },
    seconds() {
      clearInterval(timer);
      stoppedMs ??= monotonicMs();
      return (stoppedMs - startedMs) / 1000;
    },
  };
}

/** Sends `count` messages of bodyBytes each with SendBatch 100, from `producers` channels of their own. */
export async function sendMessages(
  address: string,
  queue: string,
  count: number,
  producers: number,
  progress: Progress,
): Promise<void> {
  // The body is the same for every message: its content does not matter here, and one buffer keeps the client light.
  const body = Buffer.alloc(bodyBytes, 0x61);
  let claimed = 0;
  await withChannels(address, producers, async (rpc) => {
    while (claimed < count) {
      const batch = Math.min(100, count - claimed);
      claimed += batch;
      await rpc.sendBatch({ queue, entries: Array.from({ length: batch }, () => ({ body })) });
      progress.add(batch);
    }
  });
  progress.seconds();
}

/**
 * Receives exactly `count` messages with Receive 100 (long-polling 1 s) from
 * `consumers` channels, leasing them for `visibilityMs`, and hands each
 * non-empty response to `take`.
 */
export async function receiveMessages(
  address: string,
  queue: string,
  count: number,
  consumers: number,
  visibilityMs: number,
  progress: Progress,
  take: (messages: ReceivedMessage[]) => void = () => undefined,
): Promise<void> {
  // Claim before asking, so that the consumers together never lease more than `count`.
  let claimed = 0;
  await withChannels(address, consumers, async (rpc) => {
    while (claimed < count) {
      const asked = Math.min(100, count - claimed);
      claimed += asked;
      const { messages } = await rpc.receive({
        queue,
        maxMessages: asked,
        waitTime: durationFromMs(1000),
        visibilityTimeout: durationFromMs(visibilityMs),
      });
      claimed -= asked - messages.length;
      if (messages.length > 0) take(messages);
      progress.add(messages.length);
    }
  });
  progress.seconds();
}

/** Runs `work` on `count` channels of their own at once, closing them after. */
export async function withChannels(
  address: string,
  count: number,
  work: (rpc: QueueServiceRpc) => Promise<void>,
): Promise<void> {
  const rpcs = Array.from({ length: count }, () => createQueueServiceRpc(address));
  try {
    await Promise.all(rpcs.map((rpc) => work(rpc)));
  } finally {
    for (const rpc of rpcs) rpc.close();
  }
}
