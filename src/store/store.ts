import type { ScheduleColumns } from "./schedule-columns.js";
import type { ScheduleEntry } from "./schedule-entry.js";

/**
 * A queue's configuration as stored. Storage's own type, not the rules'
 * QueueConfig: its fields are the persisted record's, so a change to the
 * rules' type cannot change what is on disk unnoticed. Durations are in
 * milliseconds; the policies are undefined when not set.
 */
export interface StoredQueueConfig {
  readonly visibilityTimeoutMs: number;
  readonly delayMs: number;
  readonly retentionMs: number;
  readonly maxMessageBytes: number;
  readonly receiveWaitTimeMs: number;
  readonly maxInFlight: number;
  readonly maxLeaseDurationMs: number;
  readonly redrivePolicy: { readonly deadLetterQueue: string; readonly maxReceiveCount: number } | undefined;
  readonly retryPolicy: { readonly minBackoffMs: number; readonly maxBackoffMs: number } | undefined;
  /** The queue's tags (SQS's queue tags); records from before them read as none. */
  readonly tags: Readonly<Record<string, string>>;
  /** A FIFO queue (fixed at creation); records from before FIFO queues read as standard, and standard queues' records leave the FIFO fields out. */
  readonly fifo?: StoredFifoConfig | undefined;
  /** Amazon SQS's queue policy document; left out when none (and so in records from before it). */
  readonly accessPolicy?: string | undefined;
  /** Amazon SQS's encryption attributes; left out when unset (SQS-managed encryption), and so in records from before them. */
  readonly sqsEncryption?: StoredSqsEncryption | undefined;
}

/** A queue's Amazon SQS encryption attributes, kept for SQS clients; nothing is encrypted with them. */
export interface StoredSqsEncryption {
  readonly kmsMasterKeyId: string;
  readonly kmsDataKeyReusePeriodMs: number;
  readonly sqsManagedSseEnabled: boolean;
}

/** A FIFO queue's own settings. */
export interface StoredFifoConfig {
  readonly contentBasedDeduplication: boolean;
  readonly deduplicationScope: "queue" | "messageGroup";
}

/** A queue as stored: its identity, configuration and where its messages live. */
export interface QueueRecord {
  readonly name: string;
  /** Never reused, carried in receipt handles: a handle of a deleted queue never fits a new one. */
  readonly queueId: number;
  /** The key space of the queue's messages; a purge moves the queue to a new, empty one. */
  readonly dataId: number;
  readonly config: StoredQueueConfig;
  readonly createTime: number;
  /** When the configuration last changed (create, then each update); records from before it read as createTime. */
  readonly updateTime: number;
  /** The queue's last message move tasks as a source queue, newest first; unset (records from before them, too) means none. */
  readonly moveTasks?: readonly StoredMoveTask[];
}

/** Where a message move task stands. */
export type MoveTaskStatus = "RUNNING" | "COMPLETED" | "CANCELLING" | "CANCELLED" | "FAILED";

/** A message move task as stored in its source queue's record. */
export interface StoredMoveTask {
  /** Unique among the queue's tasks; with the queue's name, it makes the task handle. */
  readonly taskId: string;
  readonly status: MoveTaskStatus;
  /** Empty: back to each message's dead-letter source queue. */
  readonly destinationQueue: string;
  /** 0: no limit. */
  readonly maxPerSecond: number;
  /** As last written: while running, at most a second behind. */
  readonly movedCount: number;
  /** The source queue's visible messages when the task started. */
  readonly toMoveCount: number;
  /** Empty unless FAILED. */
  readonly failureReason: string;
  /** When it started: it moves only messages that arrived in the source queue by then. */
  readonly startTime: number;
}

/** A message's immutable part: written once by Send, read by Receive. */
export interface MessageContent {
  readonly body: Uint8Array;
  readonly attributes: Readonly<Record<string, string>>;
  /** Attributes with an SQS data type, by name; no name is also in `attributes`. */
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  /** Set on a message in a dead-letter queue: where it came from and why. */
  readonly deadLetter?: DeadLetterOrigin | undefined;
  /** FIFO queues: the deduplication id the send was checked against (the message id after a dead-letter move). */
  readonly deduplicationId?: string | undefined;
  /** The tracing header it was sent with (SQS's AWSTraceHeader), if any. */
  readonly traceHeader?: string | undefined;
}

/**
 * A typed attribute (Amazon SQS's String, Number and Binary attributes, with
 * optional custom labels such as "Number.int"): its data type and its value,
 * text for String and Number types and bytes for Binary ones, kept exactly
 * as sent.
 */
export interface TypedAttribute {
  readonly dataType: string;
  readonly value: string | Uint8Array;
}

/** Where a dead-lettered message came from, and why it was moved. */
export interface DeadLetterOrigin {
  readonly sourceQueue: string;
  readonly reason: string;
}

/** What Receive reads of a message: its content, and the last checkpoint a consumer saved, if any. */
export interface MessageReading extends MessageContent {
  readonly checkpoint: Uint8Array | undefined;
}

/** A message's lease state as stored; its own file, beside the columns that hold many (schedule-columns.ts). */
export type { ScheduleEntry };

/**
 * A FIFO queue's memory of a deduplication id within its five-minute window:
 * the message the first send stored, which repeats get back. Kept in the
 * queue's data space, so a purge forgets it as SQS does.
 */
export interface StoredDeduplication {
  /** The id, prefixed with its group under the message-group scope (see FifoDeduplication). */
  readonly key: string;
  /** 32 hex digits. */
  readonly messageId: string;
  readonly sequence: number;
  /** When the window ends; a store may drop an expired record at load. */
  readonly expiresAt: number;
}

/** One change within an atomic commit. */
export type StoreOp =
  | { readonly kind: "putQueue"; readonly queue: QueueRecord }
  | { readonly kind: "removeQueue"; readonly name: string }
  /** The next queue or data id to hand out; with `shard`, that shard's own sequence (cluster mode's IdSequence). */
  | { readonly kind: "putSequence"; readonly next: number; readonly shard?: number }
  | {
      readonly kind: "putMessage";
      readonly dataId: number;
      readonly entry: ScheduleEntry;
      readonly content: MessageContent;
    }
  /** Moves a message's index entry from `fromReadyAt` to the entry's ready time, with its new state. */
  | {
      readonly kind: "reschedule";
      readonly dataId: number;
      readonly fromReadyAt: number;
      readonly entry: ScheduleEntry;
    }
  | { readonly kind: "putCheckpoint"; readonly dataId: number; readonly id: string; readonly checkpoint: Uint8Array }
  /** Remembers a FIFO send's deduplication id (overwriting one of the same key). */
  | { readonly kind: "putDeduplication"; readonly dataId: number; readonly record: StoredDeduplication }
  /** Forgets one whose window ended (nothing if it is not stored). */
  | { readonly kind: "removeDeduplication"; readonly dataId: number; readonly key: string }
  /**
   * Sends a message to a queue another broker serves (cluster mode: a
   * dead-letter move or redrive across shards). It waits in that queue's
   * inbox, stored with this commit, until the queue's owner takes it in.
   * Stores without shards refuse it.
   */
  | {
      readonly kind: "putInbound";
      readonly queue: string;
      readonly entry: ScheduleEntry;
      readonly content: MessageContent;
    }
  | {
      readonly kind: "removeMessage";
      readonly dataId: number;
      readonly id: string;
      readonly readyAt: number;
      readonly hasCheckpoint: boolean;
    };

/** A queue as loaded at start, with its messages' index entries in ready-time order. */
export interface StoredQueue {
  readonly record: QueueRecord;
  readonly schedule: ScheduleColumns;
  /**
   * FIFO queues: the deduplication records of the queue's data space, in any
   * order (expired ones may be among them); absent when there are none.
   */
  readonly deduplications?: readonly StoredDeduplication[];
}

/**
 * Hands out queue and data ids: each one once, ever. `take` returns the op
 * that records it, to be committed with the record that uses the id.
 */
export interface IdSequence {
  take(queueName: string): { readonly id: number; readonly op: StoreOp };
}

/** Everything the broker rebuilds its memory from at start. */
export interface StoredState {
  readonly queues: StoredQueue[];
  /** The next queue or data id to hand out. */
  readonly nextSequence: number;
  /** Hands out ids itself where one counter cannot (cluster mode: one sequence per shard); a counter from nextSequence if unset. */
  readonly ids?: IdSequence;
  /** The secret that signs receipt handles, made once per data directory. */
  readonly handleKey: Uint8Array;
}

/**
 * The broker's storage: a narrow interface with no connection or transaction
 * type in it. Every commit is atomic and, in fsync durability, on disk when
 * its promise resolves; commits apply in call order. Queue and data ids and
 * the sequence are 32-bit unsigned integers. Every implementation passes the
 * contract suite in test/store/store-contract.ts.
 */
export interface Store {
  /** Everything stored, with each queue's index entries in ready-time order; frees data spaces no queue uses. */
  load(): Promise<StoredState>;
  /**
   * Writes `ops` atomically: all of them or, if the commit rejects, none.
   * A store reads (copies or encodes) every op before commit() returns, so
   * callers may change the objects they passed as soon as it returns, before
   * it resolves: the broker passes its live messages (see rescheduleOp).
   * With no ops it is a barrier: it resolves once earlier commits are written.
   * `lingerMs` lets a store hold the write that long for other commits to
   * share it (one fsync for many); a store without fsyncs may ignore it.
   */
  commit(ops: readonly StoreOp[], lingerMs?: number): Promise<void>;
  /** What Receive needs of messages of one data space; undefined where a message is gone. */
  readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]>;
  /** Frees the keys of a data space no queue uses any more (after a purge or delete). */
  dropData(dataId: number): Promise<void>;
  close(): Promise<void>;
}
