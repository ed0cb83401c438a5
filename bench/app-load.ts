/** The app-shaped load (scenario 16), as each system runs it. */
export interface AppLoadOptions {
  readonly queue: string;
  /** Messages to move end to end. */
  readonly messages: number;
  /** Producers, each sending one message at a time and awaiting it before the next. */
  readonly producers: number;
  /** Messages the one consumer works on (holds unacked) at once: its concurrency, prefetch or max_ack_pending. */
  readonly concurrency: number;
}

/** What an app-shaped run delivered: each message's latency, and how many came as redeliveries (none should). */
export interface AppLoadOutcome {
  /** From just before the send's call to the start of the handler that got it, in milliseconds. */
  readonly latencies: number[];
  readonly redelivered: number;
}

/** The shape the issue gives the app-shaped load: 32 producers, one consumer working on 32 messages at once. */
export const appLoadShape = { producers: 32, concurrency: 32 } as const;

/** A count of handled messages that resolves `all` once `messages` have been handled. */
export interface Arrivals {
  readonly latencies: number[];
  /** Records a message's latency (from its timed body), and counts it as a redelivery if it is one. */
  arrived(latencyMs: number, redelivered: boolean): void;
  readonly all: Promise<void>;
  outcome(): AppLoadOutcome;
}

/** Counts the arrivals of a run of `messages`. */
export function countArrivals(messages: number): Arrivals {
  const latencies: number[] = [];
  let redelivered = 0;
  let resolve!: () => void;
  const all = new Promise<void>((done) => (resolve = done));
  if (messages === 0) resolve();
  return {
    latencies,
    all,
    arrived(latencyMs, isRedelivery) {
      latencies.push(latencyMs);
      if (isRedelivery) redelivered++;
      if (latencies.length === messages) resolve();
    },
    outcome: () => ({ latencies, redelivered }),
  };
}

/**
 * Runs `options.producers` producers, each calling `send` with its number
 * one message at a time, awaiting each, until `options.messages` have been
 * claimed among them all.
 */
export async function runProducers(
  options: AppLoadOptions,
  send: (producer: number) => Promise<unknown>,
): Promise<void> {
  let claimed = 0;
  const produce = async (producer: number): Promise<void> => {
    while (claimed < options.messages) {
      claimed++;
      await send(producer);
    }
  };
  await Promise.all(Array.from({ length: options.producers }, (_, producer) => produce(producer)));
}
