import type { LeaseStateReason } from "../protocol/lease-state-reason.js";
import type { RpcError } from "./rpc-error.js";

/** How a queue treats its messages, as the server reports it: every default filled in, durations in milliseconds. */
export interface QueueConfig {
  readonly visibilityTimeoutMs: number;
  readonly delayMs: number;
  readonly retentionMs: number;
  readonly maxMessageBytes: number;
  readonly receiveWaitTimeMs: number;
  readonly maxInFlight: number;
  readonly maxLeaseDurationMs: number;
  /** Where messages go that keep failing; undefined: retried until their retention ends. */
  readonly redrivePolicy?: RedrivePolicy;
  /** How long a message waits before a retry; undefined: retried at once. */
  readonly retryPolicy?: RetryPolicy;
  /** Labels the broker keeps but never reads: at most 50, keys 1 to 128 characters, values up to 256; empty when none. */
  readonly tags: Readonly<Record<string, string>>;
  /**
   * True for a FIFO queue: every send names a messageGroupId, and each
   * group's messages are delivered one lease at a time, in send order. Set
   * at creation only. The three FIFO fields are absent on a standard queue.
   */
  readonly fifo?: boolean;
  /** FIFO queues: a send without a deduplicationId is deduplicated by its body's SHA-256. */
  readonly contentBasedDeduplication?: boolean;
  /** FIFO queues: where deduplication ids must be unique within the five-minute window. */
  readonly deduplicationScope?: DeduplicationScope;
  /** Amazon SQS's queue policy: a JSON object of at most 8192 bytes, kept and shown but never enforced; absent when none. */
  readonly accessPolicy?: string;
  /** Amazon SQS's encryption attributes, kept and shown (nothing is encrypted with them); absent: SQS-managed encryption. */
  readonly sqsEncryption?: SqsEncryption;
}

/**
 * Amazon SQS's server-side encryption attributes of a queue, kept for SQS
 * clients and infrastructure code; the broker encrypts nothing with them.
 */
export interface SqsEncryption {
  /** KmsMasterKeyId; empty when none. */
  readonly kmsMasterKeyId: string;
  /** KmsDataKeyReusePeriodSeconds in ms: 60000 to 86400000 in whole seconds, default 300000. */
  readonly kmsDataKeyReusePeriodMs: number;
  /** SqsManagedSseEnabled; true beside a KMS key is INVALID_ARGUMENT. */
  readonly sqsManagedSseEnabled: boolean;
}

/**
 * Where a FIFO queue compares deduplication ids: across the whole queue (the
 * default), or within each message group (SQS's "messageGroup" scope).
 */
export type DeduplicationScope = "queue" | "messageGroup";

/**
 * Moves a message to a dead-letter queue when a lease ends without a delete
 * (it expired or was released) after maxReceiveCount deliveries.
 */
export interface RedrivePolicy {
  /** An existing queue other than this one. */
  readonly deadLetterQueue: string;
  /** Deliveries before a message is dead-lettered; 1 to 1000. */
  readonly maxReceiveCount: number;
}

/**
 * Spaces retries out: a message whose lease ends without a delete becomes
 * visible again after min(maxBackoffMs, minBackoffMs * 2^(receiveCount - 1)).
 */
export interface RetryPolicy {
  /** The first retry's wait; 0 to 12 h. */
  readonly minBackoffMs: number;
  /** The longest wait; minBackoffMs to 12 h. */
  readonly maxBackoffMs: number;
}

/** A queue configuration to create or update a queue with: an unset (or 0) field takes its default. */
export type QueueConfigInput = {
  readonly [K in Exclude<keyof QueueConfig, "redrivePolicy" | "retryPolicy" | "tags" | FifoSetting | SqsSetting>]?:
    | number
    | undefined;
} & {
  readonly redrivePolicy?: RedrivePolicy | undefined;
  readonly retryPolicy?: RetryPolicy | undefined;
  /** Unset means none: updateQueue replaces the tags with the rest of the configuration (or, with fields, when "tags" is named). */
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** Creates a FIFO queue. updateQueue without fields must repeat it: changing it fails with INVALID_ARGUMENT on config.fifo. */
  readonly fifo?: boolean | undefined;
  /** FIFO queues only. */
  readonly contentBasedDeduplication?: boolean | undefined;
  /** FIFO queues only; unset means "queue". */
  readonly deduplicationScope?: DeduplicationScope | undefined;
  /** Unset or empty means none. */
  readonly accessPolicy?: string | undefined;
  /** Unset means SQS-managed encryption; an unset field of it takes its default. */
  readonly sqsEncryption?: Partial<SqsEncryption> | undefined;
};

/** A field of QueueConfigInput, as UpdateQueueOptions.fields names it. */
export type QueueConfigField = keyof QueueConfigInput;

/** How updateQueue changes a queue's configuration. */
export interface UpdateQueueOptions {
  /**
   * Only these fields change, each to its value in the config (AIP-134's
   * update mask); every other field keeps its current value, even one
   * another caller changes meanwhile. A field named but unset in the config
   * takes its default: ["redrivePolicy"] without a policy removes it, and
   * ["tags"] replaces every tag. Unset: the config replaces the whole
   * configuration. An empty list is a RangeError (it would mean the whole
   * configuration). Needs a 0.2.0 broker: an older one replaces everything.
   */
  readonly fields?: readonly QueueConfigField[] | undefined;
  /**
   * Tags to change one by one (the update_mask path tags.<key>, AIP-161):
   * each is set to its value in config.tags, or removed when config.tags
   * lacks it, and every other tag keeps its value, even one another caller
   * changes meanwhile. Goes alone or beside `fields`, which then may not name
   * "tags"; either is a RangeError then, and so is an empty list. The tag
   * limits apply to the tags that result. Needs a 0.2.0 broker.
   */
  readonly tagKeys?: readonly string[] | undefined;
}

/** The settings of QueueConfig that only FIFO queues take. */
type FifoSetting = "fifo" | "contentBasedDeduplication" | "deduplicationScope";

/** The settings of QueueConfig that only Amazon SQS clients read. */
type SqsSetting = "accessPolicy" | "sqsEncryption";

/** Message counts of a queue, exact at the time of the call. */
export interface QueueStats {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** Age of the oldest message by send time; undefined when the queue is empty. */
  readonly oldestMessageAgeMs?: number;
}

/** A queue with its configuration and counts. */
export interface Queue {
  readonly name: string;
  readonly config: QueueConfig;
  readonly stats: QueueStats;
  readonly createTime: Date;
  /** When the configuration last changed: createTime, then each updateQueue. */
  readonly updateTime: Date;
  /** The queues whose redrive policy names this queue as their dead-letter queue, in name order. */
  readonly deadLetterSourceQueues: string[];
}

/** One page of queues, in name order. */
export interface QueuePage {
  readonly queues: Queue[];
  /** Pass to the next listQueues call; empty on the last page. */
  readonly nextPageToken: string;
}

/** Which page of queues listQueues returns. */
export interface ListQueuesOptions {
  readonly prefix?: string | undefined;
  /** 0 or unset means 100; at most 1000. */
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
}

/** A message body: bytes, or a string sent as UTF-8. */
export type MessageBody = Uint8Array | string;

/**
 * A typed attribute (Amazon SQS's String, Number and Binary attributes):
 * a data type, "String", "Number" or "Binary" optionally followed by "." and
 * a custom label ("Number.int", "Binary.gzip"), and its value, a string for
 * String and Number types and bytes for Binary ones, returned exactly as sent.
 */
export interface TypedAttribute {
  readonly dataType: string;
  readonly value: string | Uint8Array;
}

/** The optional parts of a message to send. */
export interface SendOptions {
  /** String attributes; a name may be here or in typedAttributes, not both. */
  readonly attributes?: Readonly<Record<string, string>> | undefined;
  /** Typed attributes, each received back with its data type exactly as sent. */
  readonly typedAttributes?: Readonly<Record<string, TypedAttribute>> | undefined;
  /**
   * Hides the message this long after it is sent; unset means the queue's
   * delay, 0 means none. A FIFO queue refuses it: only its own delay applies.
   */
  readonly delayMs?: number | undefined;
  /**
   * FIFO queues: the message's group, required there (1 to 128 ASCII
   * letters, digits and punctuation); a standard queue refuses it with
   * NOT_A_FIFO_QUEUE. A group's messages are delivered in send order.
   */
  readonly messageGroupId?: string | undefined;
  /**
   * FIFO queues: a send repeating the id of one in the last five minutes
   * stores nothing and returns that send's message id and sequence number.
   * Required unless the queue has contentBasedDeduplication.
   */
  readonly deduplicationId?: string | undefined;
  /**
   * A tracing header for the consumer to link its span to the producer's:
   * SQS's AWSTraceHeader, as AWS X-Ray and OpenTelemetry's AWS X-Ray
   * propagator write it. At most 512 characters of printable ASCII; does
   * not count toward the queue's maxMessageBytes.
   */
  readonly traceHeader?: string | undefined;
}

/** What a send stored, or, for a FIFO queue's duplicate, found already stored. */
export interface SendResult {
  readonly messageId: string;
  /** FIFO queues: the message's sequence number, 20 decimal digits (text order is numeric order); absent on a standard queue. */
  readonly sequenceNumber?: string;
}

/** What a FIFO queue's deliveries and peeks add; each field is absent on a standard queue. */
export interface FifoFields {
  /** The message's group, as sent. */
  readonly messageGroupId?: string;
  /** Increasing in send order within the queue; 20 digits. A dead-letter move or redrive gives a new one. */
  readonly sequenceNumber?: string;
  /** As sent; the body's SHA-256 in hex under content-based deduplication; the message id after a dead-letter move. */
  readonly deduplicationId?: string;
}

/** One message of a sendBatch. */
export interface SendBatchEntry extends SendOptions {
  readonly body: MessageBody;
}

/** Bounds of one call: cancelled when the signal aborts, DEADLINE_EXCEEDED after timeoutMs. */
export interface CallLimits {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
}

/** How a receive behaves; unset fields take the queue's settings. */
export interface ReceiveOptions {
  /** 1 to 100; unset means 1. */
  readonly maxMessages?: number | undefined;
  readonly visibilityTimeoutMs?: number | undefined;
  /** How long to wait for a message when none is visible; 0 to 20000. */
  readonly waitTimeMs?: number | undefined;
  /** Cancels the call: a waiting receive then takes nothing and fails with CANCELLED. */
  readonly signal?: AbortSignal | undefined;
}

/** One delivery of a message. */
export interface ReceivedMessage extends FifoFields {
  readonly messageId: string;
  /** Names this delivery's lease; stops working once the message is received again. */
  readonly receiptHandle: string;
  readonly body: Uint8Array;
  readonly attributes: Readonly<Record<string, string>>;
  /** The typed attributes, as sent; empty when none were. */
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  /** How many times the message has been delivered, this delivery included. */
  readonly receiveCount: number;
  readonly sendTime: Date;
  readonly firstReceiveTime: Date;
  /** When this lease runs out, by the server's clock. */
  readonly leaseDeadline: Date;
  /** The progress an earlier delivery saved with a Heartbeat renewal; undefined when none was. */
  readonly checkpoint?: Uint8Array;
  /** Where and why the message was dead-lettered, for a message in a dead-letter queue; undefined otherwise. */
  readonly deadLetter?: DeadLetterOrigin;
  /** When it was dead-lettered, for a message in a dead-letter queue; undefined otherwise. */
  readonly deadLetteredTime?: Date;
  /** The tracing header it was sent with (SendOptions.traceHeader, or SQS's AWSTraceHeader); absent when none was. */
  readonly traceHeader?: string;
}

/** Where a message stands in its queue, as peekMessages reports it. */
export type MessageState = "VISIBLE" | "IN_FLIGHT" | "DELAYED";

/** A message as peekMessages shows it: read, not delivered, so without a receipt handle. */
export interface PeekedMessage extends FifoFields {
  readonly messageId: string;
  readonly body: Uint8Array;
  readonly attributes: Readonly<Record<string, string>>;
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  /** Deliveries so far; peeking does not count. */
  readonly receiveCount: number;
  readonly sendTime: Date;
  /** Undefined if never delivered. */
  readonly firstReceiveTime?: Date;
  readonly state: MessageState;
  /** When its lease runs out; set when IN_FLIGHT. */
  readonly leaseDeadline?: Date;
  /** When it becomes receivable; set when DELAYED. */
  readonly visibleTime?: Date;
  /** Bytes of the last stored checkpoint; 0 when none. */
  readonly checkpointSize: number;
  /** Where and why the message was dead-lettered, for a message in a dead-letter queue; undefined otherwise. */
  readonly deadLetter?: DeadLetterOrigin;
  /** As in ReceivedMessage. */
  readonly deadLetteredTime?: Date;
  /** As in ReceivedMessage. */
  readonly traceHeader?: string;
}

/** One page of peekMessages. */
export interface PeekPage {
  /** Oldest first, by arrival in the queue. */
  readonly messages: PeekedMessage[];
  /** Pass to the next peekMessages call; empty on the last page. */
  readonly nextPageToken: string;
}

/** Which page of messages peekMessages returns. */
export interface PeekOptions {
  /** 0 or unset means 10; at most 100. */
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
}

/** Where a message in a dead-letter queue came from, and why it was moved. */
export interface DeadLetterOrigin {
  readonly sourceQueue: string;
  /** Why it was moved, e.g. MAX_RECEIVE_COUNT_EXCEEDED. */
  readonly reason: string;
}

/** Which messages redriveMessages moves, and where. */
export interface RedriveOptions {
  /** Where to move them; unset (or empty) means back to each message's source queue. */
  readonly destinationQueue?: string | undefined;
  /** At most this many; unset (or 0) means every message visible when the call starts. */
  readonly maxMessages?: number | undefined;
  /** At most this many a second; unset (or 0) means as fast as possible. */
  readonly maxPerSecond?: number | undefined;
  /** Cancels the call: the server stops moving, and the call fails with CANCELLED. */
  readonly signal?: AbortSignal | undefined;
}

/** How startMessageMoveTask moves a source queue's messages. */
export interface MoveTaskOptions {
  /** Where to move them; unset (or empty) means back to each message's source queue. */
  readonly destinationQueue?: string | undefined;
  /** At most this many a second, up to 500; unset (or 0) means as fast as possible. */
  readonly maxPerSecond?: number | undefined;
}

/** Where a message move task stands. */
export type MoveTaskStatus = "RUNNING" | "COMPLETED" | "CANCELLING" | "CANCELLED" | "FAILED";

/** A message move task, as listMessageMoveTasks reports it. */
export interface MoveTask {
  /** The handle to cancel it with; undefined unless it is RUNNING. */
  readonly taskHandle?: string;
  readonly status: MoveTaskStatus;
  readonly sourceQueue: string;
  /** Empty: back to each message's source queue. */
  readonly destinationQueue: string;
  /** 0: no limit. */
  readonly maxPerSecond: number;
  readonly movedCount: number;
  /** The source queue's visible messages when the task started. */
  readonly toMoveCount: number;
  /** Why it failed; empty unless FAILED. */
  readonly failureReason: string;
  readonly startTime: Date;
}

/** The outcome of one handle of a batch call. */
export interface EntryResult {
  readonly receiptHandle: string;
  /** Why this entry failed; undefined on success. */
  readonly error?: RpcError;
  /** For changeVisibilityBatch, the lease's new deadline on success. */
  readonly leaseDeadline?: Date;
}

/** One lease to renew on a Heartbeat stream. */
export interface LeaseRenewal {
  readonly receiptHandle: string;
  /** The lease then runs until now + this; unset means the queue's visibility timeout, 0 releases the message. */
  readonly visibilityTimeoutMs?: number | undefined;
  /** Progress to store durably with the message, at most 64 KiB; unset keeps the last one. */
  readonly checkpoint?: Uint8Array | undefined;
  /**
   * Ends the lease as a failed delivery: visible again after
   * visibilityTimeoutMs if set, else after the queue's retry backoff.
   */
  readonly failed?: boolean | undefined;
}

/** One request of a Heartbeat stream. */
export interface HeartbeatRequest {
  readonly queue: string;
  /** 0 to 1000 renewals. */
  readonly leases: readonly LeaseRenewal[];
  /** Read from a stream's first request only: release every lease it tracks when the stream breaks. */
  readonly releaseOnDisconnect?: boolean | undefined;
}

/** Whether a lease is still held, as a Heartbeat stream reports it. */
export interface LeaseState {
  readonly receiptHandle: string;
  readonly held: boolean;
  /** The lease's deadline, when held. */
  readonly leaseDeadline?: Date;
  /** Why the lease is not held (LEASE_EXPIRED, LEASE_SUPERSEDED, MESSAGE_NOT_FOUND, RELEASED, ...); empty when held. */
  readonly reason: LeaseReason;
}

/**
 * Why a lease was lost, as the wire says it: one this client knows, or any
 * other string. Left open because a newer server may send a reason this
 * client does not know yet; it must reach the caller as it came, not be
 * rejected or rewritten. (`string & {}` keeps the known names in completions.)
 */
export type LeaseReason = LeaseStateReason | (string & {});

/** How much a Subscribe stream may deliver ahead of its consumer: its credit. */
export interface FlowControl {
  /** The most leases the stream holds at once, 0 to 10000; 0 pauses deliveries. */
  readonly maxOutstandingMessages: number;
  /** The most bytes (bodies and attributes) of the leases it holds; 0 or unset: no byte limit. */
  readonly maxOutstandingBytes?: number | undefined;
}

/** One request of a Subscribe stream: the first opens it, later ones carry acks, renewals and flow control. */
export interface SubscribeRequest {
  /** Required in the first request; later ones may leave it out. */
  readonly queue?: string | undefined;
  /** First request only: the lease of each delivery; unset means the queue's visibility timeout. */
  readonly visibilityTimeoutMs?: number | undefined;
  /** First request only: a break of the stream ends every lease it holds at once. */
  readonly releaseOnDisconnect?: boolean | undefined;
  /** First request: unset means 100 messages and no byte limit; later: set replaces it, unset keeps it. */
  readonly flowControl?: FlowControl | undefined;
  /** Receipt handles to delete, 0 to 1000; each is confirmed by an AckResult. */
  readonly acks?: readonly string[] | undefined;
  /** Renewals, releases and failures, 0 to 1000, as on a Heartbeat stream; each is answered by a LeaseState. */
  readonly leases?: readonly LeaseRenewal[] | undefined;
}

/** The outcome of one ack on a Subscribe stream. */
export interface AckResult {
  readonly receiptHandle: string;
  /** Empty when the message is deleted (or was already gone); else RECEIPT_HANDLE_INVALID or LEASE_SUPERSEDED. */
  readonly reason: string;
}

/** One response of a Subscribe stream: deliveries, the answer to a request, notices, or several of these. */
export interface SubscribeResponse {
  /** Deliveries, each leased and held by the stream. */
  readonly messages: ReceivedMessage[];
  /** One per ack of the request answered, in its order. */
  readonly acks: AckResult[];
  /** One per renewal of the request answered, in its order, and notices (held=false, reason LEASE_EXPIRED). */
  readonly leases: LeaseState[];
}
