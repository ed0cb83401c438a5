import { SQSClient } from "@aws-sdk/client-sqs";
import type { Epoch } from "./crash-epoch.js";

/** One broker life's SQS endpoint, as the harness's SQS workers call it. */
export interface SqsEndpoint {
  readonly client: SQSClient;
  /** The queue URL of a queue name. */
  queueUrl(queue: string): string;
}

/** The account id holdshelf puts in its queue URLs. */
const accountId = "000000000000";

/**
 * An SDK client of the endpoint at `baseUrl` (the "sqsUrl" of the broker's
 * listening line). One attempt per call: a call cut by a kill must come
 * back failed, for the ledger to record it as unknown, not be retried
 * behind the harness's back. The timeout matches callOptions()'s deadline.
 */
export function createSqsEndpoint(baseUrl: string): SqsEndpoint {
  const client = new SQSClient({
    endpoint: baseUrl,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
    requestHandler: { requestTimeout: 30_000, connectionTimeout: 5_000 },
  });
  return { client, queueUrl: (queue) => `${baseUrl}/${accountId}/${queue}` };
}

/** The epoch's SQS endpoint; an SQS worker runs only against a target that serves one. */
export function sqsOf(epoch: Epoch): SqsEndpoint {
  if (epoch.sqs === undefined) throw new Error("an SQS worker ran against a broker without an SQS endpoint");
  return epoch.sqs;
}
