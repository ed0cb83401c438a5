import type { HoldshelfError } from "../errors/holdshelf-error.js";
import type { LeaseStateReason } from "../protocol/lease-state-reason.js";
import type { DeadLetterOrigin, StoredMoveTask, TypedAttribute } from "../store/store.js";

/** A typed attribute as the rules deliver it: as stored. */
export type { TypedAttribute };
import type { QueueConfig } from "./queue-config.js";
import type { QueueCounts } from "./queue-state.js";

/** A queue as the broker reports it. Times are epoch milliseconds. */
export interface QueueInfo {
  readonly name: string;
  readonly config: QueueConfig;
  readonly counts: QueueCounts;
  /** The queues whose redrive policy names this one as their dead-letter queue. */
  readonly deadLetterSourceQueues: string[];
  /** Age of the oldest message by send time; undefined when the queue is empty. */
  readonly oldestMessageAgeMs: number | undefined;
  readonly createTime: number;
  /** When the configuration last changed: createTime, then each update. */
  readonly updateTime: number;
}

/** A typed attribute as a request gives it: the value may be missing (the wire's oneof left unset), which Send refuses. */
export interface TypedAttributeInput {
  readonly dataType: string;
  readonly value: string | Uint8Array | undefined;
}

/** A message to send. */
export interface OutgoingMessage {
  readonly body: Uint8Array;
  readonly attributes?: Readonly<Record<string, string>>;
  /** Attributes with an SQS data type; a name may not also be in `attributes`. */
  readonly typedAttributes?: Readonly<Record<string, TypedAttributeInput>> | undefined;
  /** Undefined means the queue's delay; 0 means none. A FIFO queue takes only its own. */
  readonly delayMs?: number | undefined;
  /** FIFO queues: the message's group (required there, refused elsewhere). */
  readonly messageGroupId?: string | undefined;
  /** FIFO queues: what a repeated send is recognised by within five minutes. */
  readonly deduplicationId?: string | undefined;
  /** SQS's AWSTraceHeader (X-Ray, OpenTelemetry); empty or undefined means none. Not counted in the message's size. */
  readonly traceHeader?: string | undefined;
}

/** What a send stored, or (a FIFO queue's duplicate) found already stored. */
export interface SendResult {
  readonly messageId: string;
  /** FIFO queues: the message's sequence number, 20 decimal digits; "" on a standard queue. */
  readonly sequenceNumber: string;
}

/** How a Receive behaves; undefined fields take the queue's settings. */
export interface ReceiveOptions {
  /** 1 to 100; 0 or undefined means 1. */
  readonly maxMessages?: number | undefined;
  readonly visibilityTimeoutMs?: number | undefined;
  /** How long to wait for a message; 0 returns at once. */
  readonly waitTimeMs?: number | undefined;
  /** Aborted when the caller gives up: a waiting receive then takes nothing. */
  readonly signal?: AbortSignal | undefined;
}

/** One delivery of a message. Times are epoch milliseconds. */
export interface Delivery {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: Uint8Array;
  readonly attributes: Readonly<Record<string, string>>;
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  readonly receiveCount: number;
  readonly sendTime: number;
  readonly firstReceiveTime: number;
  readonly leaseDeadline: number;
  /** The last checkpoint a consumer saved on an earlier delivery. */
  readonly checkpoint: Uint8Array | undefined;
  /** Set on a message in a dead-letter queue: where it came from and why. */
  readonly deadLetter: DeadLetterOrigin | undefined;
  /** Set with `deadLetter`: when the message was dead-lettered (its arrival in the dead-letter queue). */
  readonly deadLetteredTime?: number | undefined;
  /** FIFO queues (else undefined): the message's group, sequence number (20 digits) and deduplication id. */
  readonly fifo?: FifoDelivery | undefined;
  /** The trace header the message was sent with, if any. */
  readonly traceHeader?: string | undefined;
}

/** What a FIFO queue's deliveries and peeks add. */
export interface FifoDelivery {
  readonly messageGroupId: string;
  readonly sequenceNumber: string;
  readonly deduplicationId: string;
}

/** Where a message stands, as PeekMessages reports it. */
export type PeekState = "VISIBLE" | "IN_FLIGHT" | "DELAYED";

/** A message as PeekMessages shows it: read, not delivered. Times are epoch milliseconds. */
export interface PeekedMessage {
  readonly messageId: string;
  readonly body: Uint8Array;
  readonly attributes: Readonly<Record<string, string>>;
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  /** Deliveries so far; peeking does not count. */
  readonly receiveCount: number;
  readonly sendTime: number;
  /** 0 when never delivered. */
  readonly firstReceiveTime: number;
  readonly state: PeekState;
  /** Set when IN_FLIGHT. */
  readonly leaseDeadline?: number;
  /** Set when DELAYED: when it becomes receivable. */
  readonly visibleTime?: number;
  /** Bytes of the last checkpoint a consumer saved; 0 when none (its content is the consumer's own). */
  readonly checkpointSize: number;
  readonly deadLetter: DeadLetterOrigin | undefined;
  /** As in Delivery. */
  readonly deadLetteredTime?: number | undefined;
  readonly fifo?: FifoDelivery | undefined;
  readonly traceHeader?: string | undefined;
}

/** One page of PeekMessages. */
export interface PeekPage {
  /** Oldest first (by arrival in the queue). */
  readonly messages: PeekedMessage[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
}

/** One lease to renew on a Heartbeat stream. */
export interface LeaseRenewal {
  readonly receiptHandle: string;
  /** Undefined means the queue's visibility timeout; 0 releases the message. */
  readonly visibilityTimeoutMs?: number | undefined;
  /** Progress to store with the message; undefined keeps the last one. */
  readonly checkpoint?: Uint8Array | undefined;
  /**
   * Ends the lease as a failed delivery: the message comes back after
   * visibilityTimeoutMs if set, else after the queue's retry backoff.
   */
  readonly failed?: boolean | undefined;
}

/** Whether a renewed lease is held, until when, or why not. */
export interface LeaseState {
  readonly receiptHandle: string;
  readonly held: boolean;
  readonly leaseDeadline?: number;
  /** Why the lease is not held. */
  readonly reason?: LeaseStateReason;
}

/** The outcome of one handle of a batch: an error, or success (with the new deadline, for visibility changes). */
export interface EntryOutcome {
  readonly receiptHandle: string;
  readonly error?: HoldshelfError;
  readonly leaseDeadline?: number;
}

/** One page of queues. */
export interface QueuePage {
  readonly queues: QueueInfo[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
}

/** A message move task as ListMessageMoveTasks reports it: as stored, named by handle and source. Times are epoch milliseconds. */
export type MoveTaskInfo = Omit<StoredMoveTask, "taskId"> & {
  /** Set only while the task runs, as SQS. */
  readonly taskHandle: string | undefined;
  readonly sourceQueue: string;
};
