import type { HoldshelfError } from "../errors/holdshelf-error.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { maxOutstandingMessages, maxReceiveMessages } from "../protocol/limits.js";
import { LeaseStream, type LeaseStreamListener } from "./lease-tracking.js";

/** A Subscribe stream's flow control: how many leases, and how many bytes of them, it may hold at once. */
export interface FlowControl {
  /** 0 pauses deliveries. */
  readonly maxMessages: number;
  /** 0: no byte limit. */
  readonly maxBytes: number;
}

/** A first request's flow control when it sets none: a consumer that names no credit still gets a bounded one. */
export const defaultFlowControl: FlowControl = { maxMessages: 100, maxBytes: 0 };

/** What one take of a subscription may lease: a count, and bytes (the take leases at least one message). */
export interface Credit {
  readonly maxMessages: number;
  readonly maxBytes: number;
}

/** What a Subscribe stream hears besides its leases' events. */
export interface SubscriptionListener extends LeaseStreamListener {
  /** Its queue was deleted, or went to another broker: end the stream with `error`. */
  queueGone(error: HoldshelfError): void;
}

/**
 * A Subscribe stream as the broker sees it: a lease stream of one queue that
 * is delivered to while it has credit. Its outstanding messages are the
 * leases it holds (LeaseStream.tracked), so every way a lease ends, an ack or
 * a purge alike, gives the credit back without bookkeeping of its own.
 */
export class Subscription extends LeaseStream {
  constructor(
    override readonly listener: SubscriptionListener,
    /** The queue it consumes. */
    readonly queueName: string,
    /** The lease of each delivery; undefined means the queue's visibility_timeout, read at each take. */
    readonly visibilityTimeoutMs: number | undefined,
    /** Replaced whole by a request that changes it. */
    public flow: FlowControl,
  ) {
    super(listener);
  }

  /** What it may take now; undefined while its credit is spent or paused. */
  credit(): Credit | undefined {
    const messages = Math.min(this.flow.maxMessages - this.tracked.size, maxReceiveMessages);
    if (messages <= 0) return undefined;
    if (this.flow.maxBytes === 0) return { maxMessages: messages, maxBytes: Infinity };
    const bytes = this.flow.maxBytes - this.heldBytes;
    // A message larger than the whole limit still comes when nothing is held, or it could never be delivered.
    if (bytes <= 0) return undefined;
    return { maxMessages: messages, maxBytes: bytes };
  }
}

/** Checks a flow control's bounds; `field` is its proto path. */
export function checkFlowControl(flow: FlowControl, field: string): void {
  const { maxMessages, maxBytes } = flow;
  if (!Number.isInteger(maxMessages) || maxMessages < 0 || maxMessages > maxOutstandingMessages) {
    throw invalidArgument(`${field}.max_outstanding_messages`, `must be 0 to ${maxOutstandingMessages}`);
  }
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw invalidArgument(`${field}.max_outstanding_bytes`, "must be 0 (no limit) or more");
  }
}
