import { expect } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerEvents } from "../../src/broker/broker-events.js";
import type { QueueConfigInput } from "../../src/broker/queue-config.js";
import type { QueueCounts } from "../../src/broker/queue-state.js";
import type { Delivery, OutgoingMessage, ReceiveOptions } from "../../src/broker/types.js";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import type { Reason } from "../../src/protocol/error-reasons.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { FakeClock } from "../support/fake-clock.js";
import { FaultyStore } from "../support/faulty-store.js";
import { WriteFault } from "../support/write-fault.js";

/**
 * A Broker driven by a FakeClock, on an in-memory store: rule tests need no
 * disk, and the store contract suite (test/store/store-contract.ts) holds the
 * in-memory store to what the durable one does. A restart keeps the stored
 * contents and opens a new store on them, as a process restarted on the same
 * data directory; the gRPC tests run the same rules on the LevelDB store.
 */
export interface BrokerHarness {
  broker: Broker;
  /** The store under the broker (without the fault switch), for reading or seeding what is stored. */
  store: MemoryStore;
  readonly clock: FakeClock;
  /** Makes the broker's commits fail while set, as a failing disk would. */
  readonly writeFault: WriteFault;
  /** Failures the broker reported from background work; a test expects none. */
  readonly backgroundErrors: unknown[];
  /** Closes broker and store, keeping the data, and opens both again on the same clock. */
  restart(): Promise<void>;
  /** Closes everything. */
  dispose(): Promise<void>;
}

/** Opens a BrokerHarness; `events` observes every broker it opens. */
export async function openBrokerHarness(options: { events?: BrokerEvents } = {}): Promise<BrokerHarness> {
  const clock = new FakeClock();
  const writeFault = new WriteFault();
  const backgroundErrors: unknown[] = [];
  const open = async (previous?: MemoryStore): Promise<{ broker: Broker; store: MemoryStore }> => {
    const store = new MemoryStore(previous?.contents);
    const broker = await Broker.open({
      store: new FaultyStore(store, writeFault),
      clock,
      onBackgroundError: (error) => backgroundErrors.push(error),
      ...(options.events === undefined ? {} : { events: options.events }),
    });
    return { broker, store };
  };
  const close = async (): Promise<void> => {
    harness.broker.close();
    await harness.broker.settled();
    await harness.store.close();
  };
  const harness: BrokerHarness = {
    ...(await open()),
    clock,
    writeFault,
    backgroundErrors,
    async restart() {
      await close();
      Object.assign(harness, await open(harness.store));
    },
    async dispose() {
      await close();
    },
  };
  return harness;
}

/** Message bytes from text. */
export function body(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

// Rule tests read deliveries' bodies as text.
export { text } from "../support/text.js";

/** Stores one message; returns its id (a FIFO queue's duplicate: the first send's). */
export async function send(
  broker: Pick<Broker, "sendWithResult">,
  queue: string,
  message: OutgoingMessage,
): Promise<string> {
  return (await broker.sendWithResult(queue, message)).messageId;
}

/** Stores 1 to 100 messages atomically; returns their ids in order. */
export async function sendBatch(
  broker: Pick<Broker, "sendBatchWithResults">,
  queue: string,
  messages: readonly OutgoingMessage[],
): Promise<string[]> {
  return (await broker.sendBatchWithResults(queue, messages)).map((result) => result.messageId);
}

/** Sends a text message; returns its id. */
export function sendText(
  h: BrokerHarness,
  queue: string,
  message: string,
  options: Omit<OutgoingMessage, "body"> = {},
): Promise<string> {
  return send(h.broker, queue, { ...options, body: body(message) });
}

/** Receives and expects exactly one message. */
export async function receiveOne(h: BrokerHarness, queue: string, options: ReceiveOptions = {}): Promise<Delivery> {
  const deliveries = await h.broker.receive(queue, options);
  expect(deliveries, "one delivery").toHaveLength(1);
  return deliveries[0]!;
}

/** Sends one text message and receives it: its first delivery. */
export async function sendAndReceive(h: BrokerHarness, queue: string, message = "m"): Promise<Delivery> {
  await sendText(h, queue, message);
  return receiveOne(h, queue);
}

/** Creates a queue, returning nothing. */
export async function createQueue(h: BrokerHarness, name: string, config?: QueueConfigInput): Promise<void> {
  await h.broker.createQueue(name, config);
}

/** The queue's message counts, without the oldest send time. */
export function counts(h: BrokerHarness, queue: string): Omit<QueueCounts, "oldestSendTime"> {
  const { visible, inFlight, delayed } = h.broker.getQueue(queue).counts;
  return { visible, inFlight, delayed };
}

/**
 * Runs `run` (sync or async) and expects it to fail with a HoldshelfError of
 * `reason` and, if given, a violation of `field`. Returns the error.
 */
export async function expectFailure(run: () => unknown, reason: Reason, field?: string): Promise<HoldshelfError> {
  let failure: unknown;
  try {
    await run();
  } catch (error) {
    failure = error;
  }
  expect(failure, `expected ${reason}`).toBeInstanceOf(HoldshelfError);
  const error = failure as HoldshelfError;
  expect(error.reason).toBe(reason);
  if (field !== undefined) expect(error.violations.map((violation) => violation.field)).toEqual([field]);
  return error;
}

/** Tracks whether a promise has settled, for asserting that a long poll is still waiting. */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(
    () => void (state.settled = true),
    () => void (state.settled = true),
  );
  return state;
}

/** Lets pending promise callbacks and one round of I/O callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
