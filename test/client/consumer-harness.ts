import { Consumer, type ConsumerClient, type ConsumerOptions, type MessageHandler } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import type { QueueStats } from "../../src/client/types.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

/** The Consumer's two paths: Subscribe (the default), and Receive with Heartbeat (the fallback). */
export type ConsumerMode = "subscribe" | "receive";

/** Both paths, for describe.each: the suites of a Consumer's behaviour run on each. */
export const consumerModes: readonly { readonly mode: ConsumerMode }[] = [{ mode: "subscribe" }, { mode: "receive" }];

/** A stream the consumers opened: a Subscribe stream, or on the Receive path a Heartbeat stream. */
export interface ConsumerStream {
  cancel(): void;
}

/** A real broker, a consumer-side client whose streams the test can see, and an admin client. */
export interface ConsumerHarness {
  readonly h: GrpcHarness;
  /** A second client, playing the operator or another consumer. */
  readonly admin: QueueClient;
  /** Every stream the consumers opened, in order: Subscribe streams, or Heartbeat streams on the Receive path. */
  readonly streams: ConsumerStream[];
  /** Everything the consumers reported to onError. */
  readonly errors: unknown[];
  /** Starts a consumer on `queue`, stopped after the test; onError collects into `errors`. */
  consume(queue: string, handler: MessageHandler, options?: ConsumerOptions): Consumer;
  stats(queue: string): Promise<QueueStats>;
  stop(): Promise<void>;
}

/** Starts a ConsumerHarness on the real clock (consumers are about real time passing), its consumers on `mode`'s path. */
export async function startConsumerHarness(mode: ConsumerMode = "receive"): Promise<ConsumerHarness> {
  const h = await startGrpcHarness();
  const client = new QueueClient(h.server.address);
  const admin = new QueueClient(h.server.address);
  const streams: ConsumerStream[] = [];
  const errors: unknown[] = [];
  const consumers: Consumer[] = [];
  const tapped: ConsumerClient = {
    getQueue: (name) => client.getQueue(name),
    receive: (queue, options) => client.receive(queue, options),
    delete: (queue, handle) => client.delete(queue, handle),
    changeVisibilityBatch: (queue, handles, ms) => client.changeVisibilityBatch(queue, handles, ms),
    heartbeat: () => {
      const stream = client.heartbeat();
      streams.push(stream);
      return stream;
    },
    subscribe: () => {
      const stream = client.subscribe();
      streams.push(stream);
      return stream;
    },
  };
  return {
    h,
    admin,
    streams,
    errors,
    consume(queue, handler, options = {}) {
      const consumer = new Consumer(tapped, queue, handler, {
        onError: (error) => errors.push(error),
        subscribe: mode === "subscribe",
        ...options,
      });
      consumers.push(consumer);
      return consumer;
    },
    async stats(queue) {
      return (await admin.getQueue(queue)).stats;
    },
    async stop() {
      await Promise.all(consumers.map((consumer) => consumer.stop()));
      client.close();
      admin.close();
      await h.stop();
    },
  };
}

/** A promise and the function that resolves it. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

// Handlers that stand for real work sleep on real time.
export { sleep } from "../support/wait.js";

/** Resolves when the signal aborts. */
export const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
  );
