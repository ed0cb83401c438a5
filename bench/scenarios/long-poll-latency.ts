import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { bodyBytes } from "../message-bodies.js";
import { createQueue } from "../pipeline.js";
import { monotonicMs } from "../proc-stats.js";
import { measureWindow, percentiles, resultOf, type Scenario } from "../scenario.js";

const consumers = 16;
const warmupSeconds = 3;
// The hot-path issue's rate. It was half of scenario 2's rate, which made
// the load, and so the tail, move with scenario 2's own result.
const ratePerSecond = 500;
const targetP99Ms = 10;

/**
 * Scenario 3: consumers wait in long polls while producers send at a fixed
 * rate, 500 a second; the latency is from a Send's return to the
 * return of the Receive that got the message. A Receive answers once its
 * lease is durable, so on fsync durability the floor is one fsync.
 */
export const longPollLatency: Scenario = {
  name: "long-poll",
  sizeMeaning: "messages sent at the fixed rate",
  defaultSize: 5_000,
  async run(context) {
    const rate = ratePerSecond;
    const messages = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    await createQueue(broker.address, "bench");
    const rig = openRig(broker.address);
    try {
      // Cold channels and unoptimized code make the first seconds' latencies ten times the rest.
      context.log(`long-poll: warm-up of ${warmupSeconds} s at ${rate}/s`);
      await rig.sendAtRate(Math.ceil(rate * warmupSeconds), rate);
      context.log(`long-poll: ${messages} messages at ${rate}/s to ${consumers} waiting consumers`);
      const { window, value: latencies } = await measureWindow(broker, () => rig.sendAtRate(messages, rate));
      const result = resultOf("3 long-poll latency", messages, window, percentiles(latencies), {
        sendRatePerSecond: rate,
      });
      return [{ ...result, target: { text: `p99 < ${targetP99Ms} ms`, met: result.latencyMs!.p99 < targetP99Ms } }];
    } finally {
      await rig.close();
    }
  },
};

/** A producer and consumers waiting in long polls, kept across a warm-up and the measured run. */
interface Rig {
  /** Sends `messages` at `rate` a second (open loop: on schedule, not after the previous send); returns each one's latency. */
  sendAtRate(messages: number, rate: number): Promise<number[]>;
  close(): Promise<void>;
}

function openRig(address: string): Rig {
  const producer = createQueueServiceRpc(address);
  const waiting = Array.from({ length: consumers }, () => createQueueServiceRpc(address));
  const receivedAt = new Map<string, number>();
  const body = Buffer.alloc(bodyBytes, 0x61);
  let done = false;
  const consume = async (rpc: QueueServiceRpc): Promise<void> => {
    while (!done) {
      const { messages: got } = await rpc.receive({ queue: "bench", waitTime: durationFromMs(1000) });
      const at = monotonicMs();
      for (const message of got) {
        receivedAt.set(message.messageId, at);
        await rpc.delete({ queue: "bench", receiptHandle: message.receiptHandle });
      }
    }
  };
  const consuming = waiting.map(consume);
  return {
    async sendAtRate(messages, rate) {
      const sentAt = new Map<string, number>();
      const sends: Promise<void>[] = [];
      const startedMs = monotonicMs();
      for (let sent = 0; sent < messages; ) {
        const due = Math.min(messages, Math.floor(((monotonicMs() - startedMs) * rate) / 1000) + 1);
        for (; sent < due; sent++) {
          sends.push(
            producer.send({ queue: "bench", body }).then(({ messageId }) => void sentAt.set(messageId, monotonicMs())),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await Promise.all(sends);
      while ([...sentAt.keys()].some((id) => !receivedAt.has(id)))
        await new Promise((resolve) => setTimeout(resolve, 10));
      // A Receive may return before the Send's own answer arrives: such latencies are negative, and kept.
      return [...sentAt].map(([id, at]) => receivedAt.get(id)! - at);
    },
    async close() {
      done = true;
      await Promise.all(consuming);
      producer.close();
      for (const rpc of waiting) rpc.close();
    },
  };
}
