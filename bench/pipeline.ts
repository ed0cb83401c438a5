import type { ClientOptions } from "@grpc/grpc-js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { QueueConfigSchema } from "../gen/holdshelf/v1/queue_pb.js";
import type { ReceivedMessage } from "../gen/holdshelf/v1/message_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../src/client/rpc-client.js";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { ageOf, timedBody } from "./message-bodies.js";

/** The shape of a produce-and-consume load. */
export interface PipelineOptions {
  readonly queue: string;
  /** Messages to move through the queue, end to end. */
  readonly messages: number;
  readonly producers: number;
  readonly consumers: number;
  /** Messages per SendBatch (1: Send) and per Receive (1: Delete, else DeleteBatch). */
  readonly batch: number;
  /** Each body's size; 1 KiB unless set. */
  readonly bodyBytes?: number;
  /** grpc-js options of every channel (HTTP/2 windows, say). */
  readonly channelOptions?: ClientOptions;
  /**
   * Whether the clients move to the broker a cluster's owner hint names
   * (the client's default); false keeps every call on `address`, so a
   * broker that does not own the queue forwards each one.
   */
  readonly followOwnerHints?: boolean;
  /**
   * A FIFO queue's fields for each message, from its number in the run (0,
   * 1, 2, … in the order producers claim them); unset for a standard queue.
   */
  readonly fifoFields?: (index: number) => FifoFields;
  /** Sees what each Receive returned, before it is deleted (the FIFO scenario checks order with it). */
  readonly onReceive?: (messages: readonly ReceivedMessage[]) => void;
}

/** The fields every send to a FIFO queue names. */
export interface FifoFields {
  readonly messageGroupId: string;
  readonly deduplicationId: string;
}

/**
 * Sends and consumes `messages` messages concurrently, each producer and
 * consumer on a channel of its own, and returns every message's end-to-end
 * latency: from just before its send to the return of the receive that got it.
 */
export async function runPipeline(address: string, options: PipelineOptions): Promise<number[]> {
  const rpcs: (QueueServiceRpc & { close(): void })[] = [];
  const channel = (): QueueServiceRpc => {
    const rpc = createQueueServiceRpc(address, {
      channelOptions: options.channelOptions ?? {},
      ...(options.followOwnerHints === undefined ? {} : { followOwnerHints: options.followOwnerHints }),
    });
    rpcs.push(rpc);
    return rpc;
  };
  const { queue, messages, batch, fifoFields } = options;
  const entry = (index: number): { body: Buffer } & Partial<FifoFields> =>
    fifoFields === undefined
      ? { body: timedBody(options.bodyBytes) }
      : { body: timedBody(options.bodyBytes), ...fifoFields(index) };
  const latencies: number[] = [];
  let claimed = 0;
  const produce = async (rpc: QueueServiceRpc): Promise<void> => {
    while (claimed < messages) {
      const first = claimed;
      const count = Math.min(batch, messages - claimed);
      claimed += count;
      if (batch === 1) await rpc.send({ queue, ...entry(first) });
      else await rpc.sendBatch({ queue, entries: Array.from({ length: count }, (_, offset) => entry(first + offset)) });
    }
  };
  const consume = async (rpc: QueueServiceRpc): Promise<void> => {
    while (latencies.length < messages) {
      const { messages: received } = await rpc.receive({
        queue,
        maxMessages: batch,
        waitTime: durationFromMs(1000),
        visibilityTimeout: durationFromMs(60_000),
      });
      for (const message of received) latencies.push(ageOf(message.body));
      options.onReceive?.(received);
      if (received.length === 1) await rpc.delete({ queue, receiptHandle: received[0]!.receiptHandle });
      else if (received.length > 1) {
        await rpc.deleteBatch({ queue, receiptHandles: received.map((message) => message.receiptHandle) });
      }
    }
  };
  try {
    await Promise.all([
      ...Array.from({ length: options.producers }, () => produce(channel())),
      ...Array.from({ length: options.consumers }, () => consume(channel())),
    ]);
  } finally {
    for (const rpc of rpcs) rpc.close();
  }
  return latencies;
}

/** Creates a queue (with the defaults unless `config` says otherwise) through a short-lived channel. */
export async function createQueue(
  address: string,
  queue: string,
  config?: MessageInitShape<typeof QueueConfigSchema>,
): Promise<void> {
  const rpc = createQueueServiceRpc(address);
  try {
    await rpc.createQueue({ name: queue, ...(config === undefined ? {} : { config }) });
  } finally {
    rpc.close();
  }
}
