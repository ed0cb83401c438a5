import { SendMessageBatchCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { SendCalls, SendEntry } from "./producer.js";
import { sqsOf } from "./sqs-endpoint.js";
import { sqsEntryReason } from "./sqs-reasons.js";

/**
 * Sends over the SQS endpoint: SendMessage, or SendMessageBatch (which
 * answers entry by entry). SQS delays count whole seconds: any delay
 * becomes 1 s (MAX_DELAY_MS allows for it).
 */
export const sqsSendCalls: SendCalls = {
  wire: "sqs",
  async send(epoch, queue, entries) {
    const sqs = sqsOf(epoch);
    const fields = (entry: SendEntry) => ({
      MessageBody: entry.body.toString("utf8"),
      ...(entry.delayMs === undefined ? {} : { DelaySeconds: Math.ceil(entry.delayMs / 1000) }),
    });
    const QueueUrl = sqs.queueUrl(queue);
    if (entries.length === 1) {
      const { MessageId } = await sqs.client.send(new SendMessageCommand({ QueueUrl, ...fields(entries[0]!) }));
      return [MessageId === undefined ? undefined : { messageId: MessageId }];
    }
    const answer = await sqs.client.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: entries.map((entry, i) => ({ Id: `e${i}`, ...fields(entry) })),
      }),
    );
    const sent = new Map((answer.Successful ?? []).map((entry) => [entry.Id, entry.MessageId]));
    const failed = new Map((answer.Failed ?? []).map((entry) => [entry.Id, entry]));
    return entries.map((_, i) => {
      const messageId = sent.get(`e${i}`);
      const failure = failed.get(`e${i}`);
      if (messageId !== undefined && failure === undefined) return { messageId };
      if (failure !== undefined && messageId === undefined)
        return { reason: sqsEntryReason(failure.Code ?? "", failure.Message ?? "") };
      // In neither list, or in both: the answer does not tell.
      return undefined;
    });
  },
};
