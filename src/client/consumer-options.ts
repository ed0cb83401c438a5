import type { Clock } from "../time/clock.js";
import type { HeartbeatStream } from "./heartbeat-stream.js";
import type { SubscribeChannel } from "./subscribe-lease-channel.js";
import type { CallLimits, DeleteOutcome, EntryResult, Queue, ReceivedMessage, ReceiveOptions } from "./types.js";

/** What a handler gets besides its message. */
export interface HandlerContext {
  /**
   * Aborts, with a LeaseLostError, when the lease is lost (the message may
   * now go to another consumer) or when stop() gives the message back after
   * its grace period. The handler should then stop: its work will be redone.
   */
  readonly signal: AbortSignal;
  /** The latest checkpoint: the one this delivery brought, or the last this handler saved. */
  readonly lastCheckpoint: Uint8Array | undefined;
  /**
   * Stores progress (at most 64 KiB) durably with the message, in a renewal
   * sent at once; resolves once stored, so that a later delivery carries it.
   * Rejects with LeaseLostError if the lease is lost first.
   */
  checkpoint(bytes: Uint8Array): Promise<void>;
}

/**
 * Works on one message. Resolving deletes it. Throwing ends its lease as a
 * failed delivery: it comes back after the queue's retry backoff (at once
 * without a retry policy; to the dead-letter queue once its redrive
 * policy's receives are spent), or after the error's retryDelayMs when it
 * has one (see RetryLater). On a FIFO queue, the later messages of its group
 * that the consumer holds are then given back unhandled, to come again
 * behind it, so that the group's order holds.
 */
export type MessageHandler = (message: ReceivedMessage, context: HandlerContext) => Promise<void> | void;

/** How a Consumer works; every option has a default. */
export interface ConsumerOptions {
  /**
   * The most messages worked on, and so leased, at once. Default 1. On a
   * FIFO queue it serves different message groups: one group's messages are
   * handled one at a time, in send order, even when several are leased
   * together (they wait their turn, leased, in a slot). On Subscribe it is
   * the stream's max_outstanding_messages.
   */
  readonly concurrency?: number | undefined;
  /**
   * Takes messages on a Subscribe stream, which the broker pushes them on
   * and which carries the acks and renewals too (default true). A broker
   * without Subscribe (UNIMPLEMENTED) is then served by Receive and
   * Heartbeat instead; false goes that way from the start.
   */
  readonly subscribe?: boolean | undefined;
  /** Subscribe only: the most bytes (bodies and attributes) of the messages held at once; 0 (default): no limit. */
  readonly maxOutstandingBytes?: number | undefined;
  /** Lease length of deliveries and renewals. Default: the queue's, read when the consumer starts. */
  readonly visibilityTimeoutMs?: number | undefined;
  /** A lease is renewed after this fraction of its length, a little earlier with jitter. Default 1/3. */
  readonly renewFraction?: number | undefined;
  /** Receive path only: the long-poll wait of each receive, 0 to 20000. Default 20000. */
  readonly waitTimeMs?: number | undefined;
  /** How long stop() waits for running handlers before it releases their messages. Default 10000. */
  readonly stopGraceMs?: number | undefined;
  /**
   * Told of every failure: a handler's (with its message), a receive's, a
   * delete's, a stream's. A handled message whose lease was lost before its
   * delete took effect (it was dead-lettered, or received again by someone
   * else, meanwhile) is told here too, with a LeaseLostError (reason
   * DEAD_LETTERED or RECEIVED_AGAIN): its work may be done again. Default
   * console.error.
   */
  readonly onError?: ((error: unknown, message?: ReceivedMessage) => void) | undefined;
  /**
   * Times the renewals, the retry backoff and stop()'s grace period; a test
   * passes a fake one. Default: the monotonic clock (performance.now()).
   */
  readonly clock?: Clock | undefined;
}

/**
 * The slice of QueueClient a Consumer uses (grpc-node's Pick<> habit,
 * spelled out so that this file needs no QueueClient); one without
 * subscribe() takes the Receive path.
 */
export interface ConsumerClient {
  getQueue(name: string): Promise<Queue>;
  receive(queue: string, options?: ReceiveOptions): Promise<ReceivedMessage[]>;
  delete(queue: string, receiptHandle: string, options?: CallLimits): Promise<DeleteOutcome>;
  changeVisibilityBatch(
    queue: string,
    receiptHandles: readonly string[],
    visibilityTimeoutMs: number,
  ): Promise<EntryResult[]>;
  heartbeat(): HeartbeatStream;
  subscribe?(): SubscribeChannel;
}

/** What both of a Consumer's paths (Subscribe, and Receive with Heartbeat) work with. */
export interface ConsumerPathSettings {
  readonly client: ConsumerClient;
  readonly queue: string;
  readonly concurrency: number;
  /** Sent with deliveries and renewals; undefined lets the broker apply the queue's. */
  readonly visibilityTimeoutMs: number | undefined;
  /** The lease length renewals are paced by: the option, or the queue's visibility timeout. */
  readonly leaseMs: number;
  readonly renewFraction: number;
  readonly clock: Clock;
  readonly report: (error: unknown, message?: ReceivedMessage) => void;
  /**
   * A failure of the consumer's own calls on the queue: a refusal
   * (isConsumerRefusal) stops the consumer (reported, and done rejects with
   * it) and answers true; any other failure is reported, to be retried, and
   * answers false.
   */
  readonly failed: (error: unknown) => boolean;
  /** Aborted when stop() begins. */
  readonly stopping: AbortSignal;
}
