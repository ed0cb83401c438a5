import type { QueueCalls } from "../../service/queue-calls.js";
import type { QueueUrls } from "../queue-urls.js";
import type { QueueKinds } from "./queue-kinds.js";
import type { ReceiveAttempts } from "./receive-attempts.js";
import type { SqsInput } from "../sqs-input.js";

/** What an SQS action has besides its input. */
export interface SqsActionContext {
  /** The broker, as this request's caller may use it. */
  readonly queues: QueueCalls;
  readonly urls: QueueUrls;
  /** Queues being purged this moment: a second PurgeQueue meanwhile is PurgeQueueInProgress. */
  readonly purging: Set<string>;
  /** FIFO receives kept under their ReceiveRequestAttemptId, endpoint-wide. */
  readonly receiveAttempts: ReceiveAttempts;
  /** The standard queues met so far, endpoint-wide: a fair queue's send drops its group before it is sent. */
  readonly queueKinds: QueueKinds;
  /** The name of the access key that signed the request; "" when the endpoint takes unsigned requests. */
  readonly callerName: string;
  /** The queue of the request's path (`/<account>/<queue>`), which old SDKs use instead of a QueueUrl parameter. */
  readonly pathQueue: string | undefined;
  /** The request's X-Amzn-Trace-Id header: a send's AWSTraceHeader when MessageSystemAttributes sets none, as in AWS. */
  readonly traceHeader: string | undefined;
}

/** An action's answer in the JSON protocol's shape (Binary values base64), which the query protocol renders as XML. */
export type SqsOutput = Record<string, unknown>;

/** One SQS action: its input in the JSON protocol's shape, whichever wire it came on. */
export type SqsAction = (input: SqsInput, context: SqsActionContext) => Promise<SqsOutput>;
