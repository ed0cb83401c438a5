import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type BatchResultErrorEntry,
} from "@aws-sdk/client-sqs";
import { recordLeaseCall, type Lease, type LeaseCalls } from "./lease-calls.js";
import type { DeliveryRecord } from "./ledger.js";
import { parseBody } from "./message-bodies.js";
import { sqsOf } from "./sqs-endpoint.js";
import { sqsEntryReason } from "./sqs-reasons.js";

/**
 * The lease calls over the SQS endpoint: ReceiveMessage, DeleteMessage(Batch)
 * and ChangeMessageVisibility(Batch). SQS counts timeouts in whole seconds:
 * visibility is rounded to the nearest second (the ledger records what was
 * asked), and any wait becomes a 1 s long poll. Batches of more than 10
 * are sent as several calls.
 */
export const sqsLeaseCalls: LeaseCalls = {
  async receive(epoch, ledger, queue, request) {
    const sqs = sqsOf(epoch);
    const seconds = Math.round(request.visibilityMs / 1000);
    const start = Date.now();
    try {
      const { Messages = [] } = await sqs.client.send(
        new ReceiveMessageCommand({
          QueueUrl: sqs.queueUrl(queue),
          MaxNumberOfMessages: request.maxMessages,
          VisibilityTimeout: seconds,
          WaitTimeSeconds: Math.ceil(request.waitMs / 1000),
          MessageSystemAttributeNames: ["ApproximateReceiveCount"],
        }),
      );
      const end = Date.now();
      const leases: Lease[] = [];
      for (const message of Messages) {
        const { MessageId, ReceiptHandle, Body } = message;
        const receiveCount = Number(message.Attributes?.ApproximateReceiveCount);
        if (
          MessageId === undefined ||
          ReceiptHandle === undefined ||
          Body === undefined ||
          !Number.isInteger(receiveCount)
        ) {
          ledger.unexpected.push(
            `ReceiveMessage from ${queue} answered an incomplete message: ${JSON.stringify(message)}`,
          );
          continue;
        }
        const { uid, poison } = parseBody(Buffer.from(Body, "utf8"));
        const delivery: DeliveryRecord = {
          messageId: MessageId,
          uid,
          queue,
          handle: ReceiptHandle,
          start,
          end,
          visibilityMs: seconds * 1000,
          receiveCount,
          drain: false,
          wire: "sqs",
        };
        ledger.deliveries.push(delivery);
        leases.push({ delivery, poison });
      }
      return leases;
    } catch (error) {
      ledger.failure(error, `ReceiveMessage from ${queue}`, epoch.killing);
      return [];
    }
  },

  async delete(epoch, ledger, leases) {
    const sqs = sqsOf(epoch);
    for (const some of batchesOf(leases)) {
      await recordLeaseCall(
        epoch,
        ledger,
        some,
        { kind: "delete", visibilityMs: 0, name: "DeleteMessage", wire: "sqs" },
        {
          one: (queue, ReceiptHandle) =>
            sqs.client.send(new DeleteMessageCommand({ QueueUrl: sqs.queueUrl(queue), ReceiptHandle })),
          batch: async (queue, handles) => {
            const answer = await sqs.client.send(
              new DeleteMessageBatchCommand({
                QueueUrl: sqs.queueUrl(queue),
                Entries: handles.map((ReceiptHandle, i) => ({ Id: `e${i}`, ReceiptHandle })),
              }),
            );
            return { results: resultsInOrder(handles.length, answer) };
          },
        },
      );
    }
  },

  async change(epoch, ledger, leases, visibilityMs) {
    const sqs = sqsOf(epoch);
    const seconds = Math.round(visibilityMs / 1000);
    const confirmed: Lease[] = [];
    for (const some of batchesOf(leases)) {
      const outcomes = await recordLeaseCall(
        epoch,
        ledger,
        some,
        { kind: "change", visibilityMs: seconds * 1000, name: "ChangeMessageVisibility", wire: "sqs" },
        {
          one: (queue, ReceiptHandle) =>
            sqs.client.send(
              new ChangeMessageVisibilityCommand({
                QueueUrl: sqs.queueUrl(queue),
                ReceiptHandle,
                VisibilityTimeout: seconds,
              }),
            ),
          batch: async (queue, handles) => {
            const answer = await sqs.client.send(
              new ChangeMessageVisibilityBatchCommand({
                QueueUrl: sqs.queueUrl(queue),
                Entries: handles.map((ReceiptHandle, i) => ({
                  Id: `e${i}`,
                  ReceiptHandle,
                  VisibilityTimeout: seconds,
                })),
              }),
            );
            return { results: resultsInOrder(handles.length, answer) };
          },
        },
      );
      confirmed.push(...some.filter((_, i) => outcomes[i]!.outcome === "ok"));
    }
    return confirmed;
  },
};

/** SQS's limit of entries in one batch call (holdshelf's own batches take more). */
const maxBatchEntries = 10;

/** Leases in batches SQS takes, in order. */
function batchesOf(leases: readonly Lease[]): Lease[][] {
  const batches: Lease[][] = [];
  for (let i = 0; i < leases.length; i += maxBatchEntries) batches.push(leases.slice(i, i + maxBatchEntries));
  return batches;
}

/**
 * A batch answer's Successful and Failed entries (Ids e0, e1, ...) as
 * results in entry order, a failure's code its holdshelf reason; an entry
 * in neither list, or in both, is left out (recordLeaseCall reports it).
 */
export function resultsInOrder(
  count: number,
  answer: {
    Successful?: readonly { Id?: string | undefined }[] | undefined;
    Failed?: readonly BatchResultErrorEntry[] | undefined;
  },
): ({ code: number; reason: string } | undefined)[] {
  const succeeded = new Set((answer.Successful ?? []).map((entry) => entry.Id));
  const failed = new Map((answer.Failed ?? []).map((entry) => [entry.Id, entry]));
  return Array.from({ length: count }, (_, i) => {
    const id = `e${i}`;
    const failure = failed.get(id);
    if (succeeded.has(id) === (failure !== undefined)) return undefined;
    return failure === undefined
      ? { code: 0, reason: "" }
      : { code: 1, reason: sqsEntryReason(failure.Code ?? "", failure.Message ?? "") };
  });
}
