/**
 * pipeline.ts's load through the broker's SQS endpoint with
 * @aws-sdk/client-sqs: producers SendMessageBatch, consumers ReceiveMessage
 * and DeleteMessageBatch, each on an SDK client (and so a keep-alive HTTP
 * connection) of its own.
 */
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { bodyBytes } from "./message-bodies.js";
import { monotonicMs } from "./proc-stats.js";

/** The shape of an SQS load: pipeline.ts's, with SQS's batch bound. */
export interface SqsPipelineOptions {
  readonly queueUrl: string;
  readonly messages: number;
  readonly producers: number;
  readonly consumers: number;
  /** Entries per SendMessageBatch and MaxNumberOfMessages per ReceiveMessage: at most 10, SQS's bound. */
  readonly batch: number;
  /** Each body's size in bytes (ASCII, so also in characters); 1 KiB unless set. */
  readonly bodyBytes?: number;
}

/** What an SQS run delivered: each message's latency, and how many calls the SDK had to retry (none should). */
export interface SqsPipelineOutcome {
  readonly latencies: number[];
  readonly retriedCalls: number;
}

// The endpoint takes any request unsigned or signed when it has no access
// keys (--sqs-credentials), as the bench runs it; the SDK signs every request
// with these all the same, so its client CPU includes SigV4.
const credentials = { accessKeyId: "bench", secretAccessKey: "bench" };
const region = "us-east-1";

/**
 * An SDK client of the endpoint as an application would make one: MD5 checks
 * of bodies sent and received on and `maxAttempts` at its default (3), both
 * the SDK's defaults.
 */
export function createSqsClient(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region, credentials });
}

/** The URL the endpoint gives `queue`. */
export async function sqsQueueUrl(endpoint: string, queue: string): Promise<string> {
  const sqs = createSqsClient(endpoint);
  try {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queue }));
    if (QueueUrl === undefined) throw new Error(`GetQueueUrl gave no URL for ${queue}`);
    return QueueUrl;
  } finally {
    sqs.destroy();
  }
}

/**
 * Sends and consumes `messages` messages concurrently, as runPipeline does
 * over gRPC, and returns every message's end-to-end latency: from just
 * before its send to the return of the ReceiveMessage that got it. A
 * consumer long-polls for 1 s (WaitTimeSeconds 1, runPipeline's wait) with
 * a 60 s visibility timeout, and deletes what one receive returned with one
 * DeleteMessageBatch (DeleteMessage for one message). An entry the endpoint
 * reports failed stops the run.
 */
export async function runSqsPipeline(endpoint: string, options: SqsPipelineOptions): Promise<SqsPipelineOutcome> {
  const clients: SQSClient[] = [];
  const client = (): SQSClient => {
    const sqs = createSqsClient(endpoint);
    clients.push(sqs);
    return sqs;
  };
  const { queueUrl: QueueUrl, messages, batch } = options;
  const latencies: number[] = [];
  let retriedCalls = 0;
  const counted = <T extends { $metadata: { attempts?: number } }>(output: T): T => {
    if ((output.$metadata.attempts ?? 1) > 1) retriedCalls++;
    return output;
  };
  let claimed = 0;
  const produce = async (sqs: SQSClient): Promise<void> => {
    while (claimed < messages) {
      const count = Math.min(batch, messages - claimed);
      claimed += count;
      const Entries = Array.from({ length: count }, (_, index) => ({
        Id: `m${index}`,
        MessageBody: timedText(options.bodyBytes),
      }));
      const { Failed } = counted(await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries })));
      if (Failed !== undefined && Failed.length > 0)
        throw new Error(`SendMessageBatch failed entries: ${JSON.stringify(Failed)}`);
    }
  };
  const consume = async (sqs: SQSClient): Promise<void> => {
    while (latencies.length < messages) {
      const { Messages: received = [] } = counted(
        await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl,
            MaxNumberOfMessages: batch,
            WaitTimeSeconds: 1,
            VisibilityTimeout: 60,
          }),
        ),
      );
      for (const message of received) latencies.push(ageOfText(message.Body!));
      if (received.length === 1)
        counted(await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: received[0]!.ReceiptHandle! })));
      else if (received.length > 1) {
        const Entries = received.map((message, index) => ({ Id: `m${index}`, ReceiptHandle: message.ReceiptHandle! }));
        const { Failed } = counted(await sqs.send(new DeleteMessageBatchCommand({ QueueUrl, Entries })));
        if (Failed !== undefined && Failed.length > 0)
          throw new Error(`DeleteMessageBatch failed entries: ${JSON.stringify(Failed)}`);
      }
    }
  };
  try {
    await Promise.all([
      ...Array.from({ length: options.producers }, () => produce(client())),
      ...Array.from({ length: options.consumers }, () => consume(client())),
    ]);
  } finally {
    for (const sqs of clients) sqs.destroy();
  }
  return { latencies, retriedCalls };
}

/**
 * An ASCII body of `bytes` bytes (1 KiB unless told) starting with the
 * monotonic time it was made at: an SQS body is text, where timedBody's
 * carries the time as a binary double.
 */
function timedText(bytes = bodyBytes): string {
  const stamp = `${monotonicMs().toFixed(3)} `;
  return stamp + "a".repeat(bytes - stamp.length);
}

/** Milliseconds since a timedText was made. */
function ageOfText(body: string): number {
  return monotonicMs() - Number.parseFloat(body);
}
