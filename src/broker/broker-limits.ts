import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { QueueState } from "./queue-state.js";

/**
 * Broker-wide capacity limits. Past each, the call that would need more
 * fails with RESOURCE_EXHAUSTED and a stable reason, instead of the process
 * growing until it runs out of memory; capacity comes back as load goes.
 */
export interface BrokerLimits {
  /** Queues that may exist at once (CreateQueue past it: TOO_MANY_QUEUES). */
  readonly maxQueues: number;
  /** Long-poll Receives that may wait at once (past it: TOO_MANY_WAITING_RECEIVES). */
  readonly maxWaitingReceives: number;
  /** Subscribe streams one queue may have at once (past it: TOO_MANY_SUBSCRIBERS). */
  readonly maxSubscribersPerQueue: number;
  /** Messages stored in all queues together (Send past it: BROKER_FULL). */
  readonly maxStoredMessages: number;
  /**
   * Deduplication ids the FIFO queues' windows remember together (a FIFO
   * Send that would add one past it: BROKER_FULL). Each id stays five
   * minutes after its send.
   */
  readonly maxDeduplicationIds: number;
}

/**
 * Defaults sized for a broker with a few GiB of memory. Each stored message
 * keeps about 100 B of index in typed arrays, outside V8's heap, and a
 * restart's peak brings that to 170-180 B of RSS (the restart scenario in
 * docs/performance.md), so 5 million take under 1 GB. A deduplication id
 * costs about 200 B of V8 heap (the fifo scenario): 5 million, about 1 GB,
 * are over 16,000 new FIFO sends a second held for the five minutes, more
 * than one broker takes. A waiting Receive holds a call, a timer and a
 * closure (a few KB); a queue its index and metrics series. An idle
 * Subscribe stream holds a call and a waiter, and one queue's subscribers
 * take turns in a list: a thousand per queue keeps a turn cheap.
 */
export const defaultBrokerLimits: BrokerLimits = {
  maxQueues: 10_000,
  maxWaitingReceives: 10_000,
  maxSubscribersPerQueue: 1000,
  maxStoredMessages: 5_000_000,
  maxDeduplicationIds: 5_000_000,
};

/** TOO_MANY_QUEUES: CreateQueue of a new queue when `max` exist. */
export function tooManyQueues(max: number): HoldshelfError {
  return new HoldshelfError(
    "TOO_MANY_QUEUES",
    `the broker holds ${max} queues, its limit (--max-queues ${max}); delete a queue or raise the limit`,
  );
}

/** TOO_MANY_WAITING_RECEIVES: a long poll when `max` already wait. */
export function tooManyWaitingReceives(max: number): HoldshelfError {
  return new HoldshelfError(
    "TOO_MANY_WAITING_RECEIVES",
    `${max} long-poll Receives are waiting, the broker's limit (--max-waiting-receives ${max}); retry later`,
  );
}

/** TOO_MANY_SUBSCRIBERS: a Subscribe stream on a queue that already has `max`. */
export function tooManySubscribers(queue: string, max: number): HoldshelfError {
  return new HoldshelfError(
    "TOO_MANY_SUBSCRIBERS",
    `queue "${queue}" has ${max} Subscribe streams, the broker's limit (--max-subscribers-per-queue ${max}); use fewer streams or raise the limit`,
  );
}

/**
 * Counts the messages stored in all queues, and reserves room for sends
 * whose writes are still on their way to disk (they are in no queue yet), so
 * that concurrent sends cannot together pass the limit.
 */
export class StoredMessageBudget {
  private pending = 0;

  constructor(
    private readonly max: number,
    private readonly queues: () => Iterable<QueueState>,
  ) {}

  /**
   * Reserves room for `count` messages; throws BROKER_FULL when there is
   * none. Call the returned function once they are in their queue (or failed).
   */
  reserve(count: number): () => void {
    // One pass over the queues per Send: a few microseconds per thousand
    // queues, cheaper than keeping a second count in step with every path
    // that adds or drops messages (retention, purge, dead letters, restart).
    let stored = this.pending;
    for (const queue of this.queues()) stored += queue.size;
    if (stored + count > this.max) {
      throw new HoldshelfError(
        "BROKER_FULL",
        `the broker stores ${stored} messages and takes at most ${this.max} (--max-stored-messages); ` +
          "consume or purge messages, or retry later",
      );
    }
    this.pending += count;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.pending -= count;
    };
  }
}

/**
 * Bounds the ids the FIFO queues' deduplication windows remember, all queues
 * together: the window's memory grows with the send rate, not with what is
 * stored, so --max-stored-messages does not bound it.
 */
export class DeduplicationIdBudget {
  constructor(
    private readonly max: number,
    private readonly queues: () => Iterable<QueueState>,
  ) {}

  /**
   * Throws BROKER_FULL when the windows hold more than the limit, counting
   * the ids the send being checked has just added (it then abandons them).
   * A send that adds none (every message a repeat) is always answered.
   */
  check(added: number): void {
    if (added === 0) return;
    // One pass over the queues per FIFO send, as StoredMessageBudget does.
    let remembered = 0;
    for (const queue of this.queues()) remembered += queue.deduplication?.size ?? 0;
    if (remembered <= this.max) return;
    throw new HoldshelfError(
      "BROKER_FULL",
      `the FIFO queues' deduplication windows would hold ${remembered} ids, more than the broker keeps (--max-deduplication-ids ${this.max}); ` +
        "ids leave their window five minutes after their send: retry later",
    );
  }
}
