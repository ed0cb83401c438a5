// The console API's JSON forms (issue #18), as the broker's console listener
// answers them under /api. Times are epoch milliseconds, rates messages a second.

/** GET /api/session. */
export interface Session {
  readonly authRequired: boolean;
  readonly signedIn: boolean;
  readonly principal: string | null;
  readonly csrfToken: string | null;
  /** Admin on every queue ("*"): what creating queues and the broker's status need. */
  readonly adminEverywhere: boolean;
}

/** What the session's token may do on one queue: the page disables what it may not. */
export interface QueuePermissions {
  readonly send: boolean;
  readonly receive: boolean;
  readonly admin: boolean;
}

/** POST /api/session. */
export interface SignInAnswer {
  readonly signedIn: true;
  readonly principal: string;
  readonly csrfToken: string;
  readonly adminEverywhere: boolean;
}

/**
 * One refused field, named by its proto path ("config.visibility_timeout"):
 * a stable reason (the console's own, such as NOT_A_DURATION, or the
 * broker's, such as INVALID_ARGUMENT) and words to show beside the field.
 */
export interface FieldViolation {
  readonly field: string;
  readonly reason: string;
  readonly message: string;
}

/** The body of every answer with a status of 400 or more. */
export interface ErrorBody {
  readonly error: { readonly reason: string; readonly message: string; readonly fields?: readonly FieldViolation[] };
}

/** Messages a second per sample, oldest first, each the average over the sample interval ending at t. */
export interface RateSeries {
  readonly t: readonly number[];
  readonly sent: readonly number[];
  readonly received: readonly number[];
  readonly deleted: readonly number[];
  readonly deadLettered: readonly number[];
  /** Messages moved in: dead letters, redrives and moves arriving here. */
  readonly arrived: readonly number[];
}

/** A FIFO queue's settings; every send names a message group, delivered in order. */
export interface FifoSettings {
  /** A send without a deduplication id is deduplicated by its body's SHA-256. */
  readonly contentBasedDeduplication: boolean;
  /** Where a deduplication id must be unique for five minutes: the whole queue, or each message group. */
  readonly deduplicationScope: "queue" | "messageGroup";
}

/** One row of GET /api/queues. */
export interface QueueRow {
  readonly name: string;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldestMessageAgeMs: number | null;
  readonly deadLetterQueue: string | null;
  readonly deadLetterSourceQueues: readonly string[];
  /** null for a standard queue. */
  readonly fifo: FifoSettings | null;
  readonly rates: RateSeries;
  /** Each rate's average over exactly the intervals its series covers. */
  readonly averageRates: Readonly<Record<Exclude<keyof RateSeries, "t">, number>>;
  /** The span this row's series covers (shorter than the list's for a queue sampled only lately). */
  readonly rateWindowMs: number;
  /** null: the queue's owner has no samples of it yet (it is new, or just moved to another broker); read through ListQueueActivity. */
  readonly deadLettering: boolean | null;
  readonly oldestAgeGrowing: boolean | null;
  readonly permissions: QueuePermissions;
}

/** GET /api/queues. */
export interface QueueList {
  readonly queues: readonly QueueRow[];
  readonly sampleIntervalMs: number;
  /** The span each row's rate series covers, and its rate figures average over. */
  readonly rateWindowMs: number;
  /** More queues exist than the list holds (it stops at 10,000). */
  readonly truncated: boolean;
  readonly now: number;
}

/** Protobuf JSON of holdshelf.v1.RedrivePolicy. */
export interface RedrivePolicyJson {
  deadLetterQueue: string;
  /** Numbers, or text as typed when a field does not read as one: protobuf's JSON takes "12", and the broker names a field it cannot read. */
  maxReceiveCount: number | string;
}

/** Protobuf JSON of holdshelf.v1.RetryPolicy; durations as "30s". */
export interface RetryPolicyJson {
  minBackoff?: string;
  maxBackoff?: string;
}

/** Protobuf JSON of holdshelf.v1.DeduplicationScope. */
export type DeduplicationScopeJson = "DEDUPLICATION_SCOPE_QUEUE" | "DEDUPLICATION_SCOPE_MESSAGE_GROUP";

/** Protobuf JSON of holdshelf.v1.QueueConfig; durations as "30s" or "0.500s". */
export interface QueueConfigJson {
  visibilityTimeout?: string;
  delay?: string;
  retention?: string;
  maxMessageBytes?: number | string;
  receiveWaitTime?: string;
  maxInFlight?: number | string;
  maxLeaseDuration?: string;
  redrivePolicy?: RedrivePolicyJson;
  retryPolicy?: RetryPolicyJson;
  tags?: Record<string, string>;
  /** Set at creation only: an update must send it as the queue has it. */
  fifo?: boolean;
  contentBasedDeduplication?: boolean;
  deduplicationScope?: DeduplicationScopeJson;
}

/** Message counts, exact at the time of the call. */
export interface QueueStats {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldestMessageAgeMs: number | null;
}

/** A queue: its whole configuration (defaults filled in) and counts. */
export interface QueueView {
  readonly name: string;
  readonly config: QueueConfigJson;
  readonly stats: QueueStats;
  /** null when the broker did not say (the server sends null for an unset time). */
  readonly createTime: number | null;
  readonly updateTime: number | null;
  readonly deadLetterSourceQueues: readonly string[];
  readonly permissions: QueuePermissions;
  /** null for a standard queue. */
  readonly fifo: FifoSettings | null;
}

/**
 * A queue's recent samples, aligned with t; counts as counts, rates in
 * messages a second. The last point is the counts now, with no rates (null).
 */
export interface QueueHistory {
  readonly t: readonly number[];
  readonly visible: readonly number[];
  readonly inFlight: readonly number[];
  readonly delayed: readonly number[];
  readonly sent: readonly (number | null)[];
  readonly received: readonly (number | null)[];
  readonly deleted: readonly (number | null)[];
  readonly deadLettered: readonly (number | null)[];
  /** Messages moved in: dead letters, redrives and moves arriving here. */
  readonly arrived: readonly (number | null)[];
}

/** How long consumers took from receive to delete, over the window. */
export interface ProcessingTime {
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly count: number;
  readonly windowMs: number;
}

/** GET /api/queues/:name. */
export interface QueueDetail {
  readonly queue: QueueView;
  readonly history: QueueHistory;
  /** null: the queue's owner has no samples of it yet (it is new, or just moved to another broker); read through ListQueueActivity. */
  readonly processing: ProcessingTime | null;
  readonly sampleIntervalMs: number;
  /** The broker that serves the queue; null outside cluster mode. */
  readonly servedBy: { readonly nodeId: string; readonly address: string } | null;
}

/** Where a peeked message stands. */
export type MessageState = "visible" | "in_flight" | "delayed";

/** A typed attribute; binaryValue is base64. */
export interface TypedAttribute {
  readonly dataType: string;
  readonly stringValue?: string;
  readonly binaryValue?: string;
}

/** Where a dead letter came from, why and when, and its receive history, kept across the move. */
export interface DeadLetterHistory {
  readonly sourceQueue: string;
  readonly reason: string;
  readonly deadLetteredAt: number | null;
  /** Every receive, before the move and since. */
  readonly receiveCount: number;
  /** null: never received, or dead-lettered by a broker before 0.2.0, which did not keep it. */
  readonly firstReceiveTime: number | null;
}

/** One message read by the browser, which never leases it. */
export interface PeekedMessage {
  readonly messageId: string;
  /** The body, base64. */
  readonly body: string;
  /** The body as text when it is valid UTF-8. */
  readonly bodyText: string | null;
  readonly attributes: Readonly<Record<string, string>>;
  readonly typedAttributes: Readonly<Record<string, TypedAttribute>>;
  readonly receiveCount: number;
  readonly sendTime: number;
  readonly firstReceiveTime: number | null;
  readonly state: MessageState;
  readonly leaseDeadline: number | null;
  readonly visibleTime: number | null;
  readonly checkpointSize: number;
  readonly deadLetterSourceQueue: string | null;
  readonly deadLetterReason: string | null;
  /** A dead letter's history, kept across its move; null for a message never dead-lettered. */
  readonly deadLetter: DeadLetterHistory | null;
  /** FIFO queues' messages: their group, sequence number (20 digits) and deduplication id; null on a standard queue. */
  readonly messageGroupId: string | null;
  readonly sequenceNumber: string | null;
  readonly deduplicationId: string | null;
  /** The trace header it was sent with (SQS's AWSTraceHeader, gRPC's trace_header); null when none. */
  readonly traceHeader: string | null;
}

/** GET /api/queues/:name/messages. */
export interface MessagePage {
  readonly messages: readonly PeekedMessage[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
}

/** POST /api/queues/:name/messages. */
export interface TestMessage {
  body: string;
  attributes: Record<string, string>;
  /** Text when the field does not read as a whole number: the broker refuses it, naming the field. */
  delaySeconds: number | string | null;
  /** FIFO queues only: required there, refused elsewhere. */
  messageGroupId: string | null;
  /** FIFO queues only; may be left out when the queue deduplicates by content. */
  deduplicationId: string | null;
}

/** POST /api/queues/:name/messages' answer: a FIFO queue's duplicate gets the first send's id and number. */
export interface SentMessage {
  readonly messageId: string;
  /** null on a standard queue. */
  readonly sequenceNumber: string | null;
}

/** The state of a move task. */
export type MoveTaskStatus = "RUNNING" | "COMPLETED" | "CANCELLED" | "FAILED";

/** A redrive run in the background, from a dead-letter queue. */
export interface MoveTask {
  /** Set only while the task runs. */
  readonly taskHandle: string | null;
  readonly status: MoveTaskStatus;
  readonly sourceQueue: string;
  /** null: back to the queues the messages came from. */
  readonly destinationQueue: string | null;
  readonly maxPerSecond: number | null;
  readonly movedCount: number;
  readonly toMoveCount: number;
  readonly failureReason: string | null;
  /** null when the broker did not say when it started. */
  readonly startTime: number | null;
  readonly ratePerSecond: number | null;
}

/** POST /api/queues/:name/move-tasks. */
export interface MoveTaskStart {
  destinationQueue: string | null;
  /** Text when the field does not read as a whole number: the broker refuses it, naming the field. */
  maxPerSecond: number | string | null;
}
