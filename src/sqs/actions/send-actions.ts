import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { printableIdPattern } from "../../protocol/printable-id-pattern.js";
import { brokerFailure } from "../../service/broker-failure.js";
import { sqsErrorOf, toSqsError } from "../holdshelf-errors.js";
import { attributesFromSqs, type HoldshelfAttributes } from "../message-attributes.js";
import { md5OfBody } from "../message-digests.js";
import { systemAttributesFromSqs, type SentSystemAttributes } from "../message-system-attributes.js";
import { checkMessageText } from "../message-text.js";
import { SqsError, sqsErrors } from "../sqs-error.js";
import { optionalInteger, optionalString, structureMap, type SqsInput } from "../sqs-input.js";
import type { SqsAction, SqsActionContext, SqsOutput } from "./action-context.js";
import { batchEntries, batchFailure, type BatchFailure } from "./batch-entries.js";
import { isGroupRequiredRefusal, isStandardQueueGroupRefusal } from "./fair-queue-groups.js";
import { fifoDelayRefused, isFifoDelayRefusal, withoutIgnoredDelay } from "./fifo-delays.js";
import { oversizeRefusal } from "./oversize-messages.js";
import { queueOfRequest } from "./queue-of-request.js";

// SQS's bounds, in seconds and bytes.
const maxDelaySeconds = 900;
const maxBatchBytes = 1_048_576;

/** A message to send, checked: its body, delay, attributes and FIFO ids as holdshelf stores them. */
interface PreparedMessage {
  readonly body: string;
  readonly delaySeconds: number | undefined;
  readonly attributes: HoldshelfAttributes;
  /** FIFO queues' ids, as given: the broker checks them against the queue (holdshelf-errors.ts words its refusals). */
  readonly messageGroupId: string | undefined;
  readonly deduplicationId: string | undefined;
  /** AWSTraceHeader, and the digest of MessageSystemAttributes. */
  readonly system: SentSystemAttributes;
}

/** What the broker answers a stored (or, on a FIFO queue, deduplicated) message: its id and sequence number ("" on a standard queue). */
interface Sent {
  readonly messageId: string;
  readonly sequenceNumber: string;
}

/** SendMessage. */
export const sendMessage: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const given = prepareMessage(input, context.traceHeader);
  if (given.messageGroupId !== undefined && context.queueKinds.isStandard(queue)) {
    // A fair queue's send to a queue known as standard: the group goes before the send (queue-kinds.ts).
    try {
      return await sendOne(queue, { ...given, messageGroupId: undefined }, context);
    } catch (error) {
      if (!isGroupRequiredRefusal(error, "message_group_id")) throw error;
      // The name is a FIFO queue now: forget what was known, and send as given.
      context.queueKinds.forget(queue);
    }
  }
  const message = withoutIgnoredDelay(given, queue);
  try {
    return await sendOne(queue, message, context);
  } catch (error) {
    if (isStandardQueueGroupRefusal(error, "message_group_id")) {
      // A fair queue's send: the group is dropped (fair-queue-groups.ts); any other refusal stands.
      context.queueKinds.learnStandard(queue);
      return sendOne(queue, { ...message, messageGroupId: undefined }, context);
    }
    if (!(await isFifoDelayRefusal(error, "delay", message.delaySeconds, queue, context))) throw error;
    if (message.delaySeconds !== 0) throw fifoDelayRefused(message.delaySeconds!);
    return sendOne(queue, { ...message, delaySeconds: undefined }, context);
  }
};

/** Sends one message and answers as SQS does; one stored without a sequence number shows its queue is standard. */
async function sendOne(queue: string, message: PreparedMessage, context: SqsActionContext): Promise<SqsOutput> {
  let sent: Sent;
  try {
    sent = await context.queues.call("send", { queue, ...sendFields(message) });
  } catch (error) {
    throw (await oversizeRefusal(error, queue, context, "call")) ?? error;
  }
  if (sent.sequenceNumber === "") context.queueKinds.learnStandard(queue);
  return sentAnswer(sent, message);
}

/**
 * SendMessageBatch. SQS answers entry by entry, where holdshelf's SendBatch
 * stores all or nothing: entries SQS would refuse are reported failed, the
 * rest are stored in one atomic batch, and an entry the broker refuses (too
 * large for the queue) is reported failed and the batch sent again without
 * it. A FIFO entry without a group or a needed deduplication id fails the
 * whole call instead, as in SQS. Once a refused delay shows the queue is
 * FIFO, every entry's delay gets SQS's FIFO rule at once (fifo-delays.ts).
 * What is known of the queue's kind goes first: a standard queue's groups
 * (queue-kinds.ts) and a .fifo queue's zero delays are dropped before the
 * first send.
 */
export const sendMessageBatch: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const entries = batchEntries(input, "Entries", "SendMessageBatchRequestEntry");
  const failed: BatchFailure[] = [];
  let pending: { id: string; message: PreparedMessage }[] = [];
  let totalBytes = 0;
  for (const { id, input: entry } of entries) {
    try {
      const message = prepareMessage(entry, context.traceHeader);
      totalBytes += Buffer.byteLength(message.body) + message.attributes.bytes;
      pending.push({ id, message });
    } catch (error) {
      if (!(error instanceof SqsError)) throw error;
      failed.push(batchFailure(id, error));
    }
  }
  if (totalBytes > maxBatchBytes) {
    throw sqsErrors.batchRequestTooLong(
      `Batch requests cannot be longer than ${maxBatchBytes} bytes. You have sent ${totalBytes} bytes.`,
    );
  }
  // With every entry refused, the queue is still looked up: a missing one is QueueDoesNotExist, as for any batch.
  if (pending.length === 0) await context.queues.call("getQueue", { name: queue });
  const givenGroups = new Map(pending.map(({ id, message }) => [id, message.messageGroupId]));
  let groupsDropped =
    context.queueKinds.isStandard(queue) && pending.some(({ message }) => message.messageGroupId !== undefined);
  pending = pending.map(({ id, message }) => ({
    id,
    message: withoutIgnoredDelay(groupsDropped ? { ...message, messageGroupId: undefined } : message, queue),
  }));
  const successful: SqsOutput[] = [];
  while (pending.length > 0) {
    try {
      const { messageIds, sequenceNumbers } = await context.queues.call("sendBatch", {
        queue,
        entries: pending.map(({ message }) => sendFields(message)),
      });
      if (sequenceNumbers.every((sequenceNumber) => sequenceNumber === "")) context.queueKinds.learnStandard(queue);
      pending.forEach(({ id, message }, index) => {
        const sent = { messageId: messageIds[index]!, sequenceNumber: sequenceNumbers[index] ?? "" };
        successful.push({ Id: id, ...sentAnswer(sent, message) });
      });
      break;
    } catch (error) {
      const index = failedEntryIndex(error);
      if (index === undefined || index >= pending.length) throw error;
      if (groupsDropped && isGroupRequiredRefusal(error, `entries[${index}].message_group_id`)) {
        // The name is a FIFO queue now: forget what was known, and give each entry its group back.
        context.queueKinds.forget(queue);
        groupsDropped = false;
        pending = pending.map(({ id, message }) => ({
          id,
          message: { ...message, messageGroupId: givenGroups.get(id) },
        }));
        continue;
      }
      if (isStandardQueueGroupRefusal(error, `entries[${index}].message_group_id`)) {
        // A standard queue: every entry's group is dropped at once (fair-queue-groups.ts).
        context.queueKinds.learnStandard(queue);
        pending = pending.map(({ id, message }) => ({ id, message: { ...message, messageGroupId: undefined } }));
        continue;
      }
      if (
        await isFifoDelayRefusal(error, `entries[${index}].delay`, pending[index]!.message.delaySeconds, queue, context)
      ) {
        const delayed = pending.filter(({ message }) => (message.delaySeconds ?? 0) > 0);
        for (const { id, message } of delayed) failed.push(batchFailure(id, fifoDelayRefused(message.delaySeconds!)));
        pending = pending
          .filter((entry) => !delayed.includes(entry))
          .map(({ id, message }) => ({ id, message: { ...message, delaySeconds: undefined } }));
        continue;
      }
      // A FIFO entry without its group, or its deduplication id, fails the whole call, as in SQS: nothing is stored.
      const fifoRefusal = missingFifoId(error);
      if (fifoRefusal !== undefined) throw fifoRefusal;
      const refusal = (await oversizeRefusal(error, queue, context, "entry")) ?? toSqsError(error, () => undefined);
      failed.push(batchFailure(pending[index]!.id, refusal));
      pending = pending.filter((_, at) => at !== index);
    }
  }
  return { Successful: successful, Failed: failed };
};

function prepareMessage(input: SqsInput, requestTraceHeader: string | undefined): PreparedMessage {
  const body = optionalString(input, "MessageBody");
  if (body === undefined || body === "")
    throw sqsErrors.missingParameter("The request must contain the parameter MessageBody.");
  checkMessageText(body, "the message body");
  return {
    body,
    delaySeconds: optionalInteger(input, "DelaySeconds", 0, maxDelaySeconds),
    attributes: attributesFromSqs(structureMap(input, "MessageAttributes"), "MessageAttributes"),
    messageGroupId: fifoId(input, "MessageGroupId"),
    deduplicationId: fifoId(input, "MessageDeduplicationId"),
    system: systemAttributesFromSqs(input, requestTraceHeader),
  };
}

/**
 * A MessageGroupId or MessageDeduplicationId, checked as AWS checks it on
 * either kind of queue, with AWS's words naming the value. An empty group is
 * left to the queue: a FIFO queue's send lacks it (MissingParameter).
 */
function fifoId(input: SqsInput, name: "MessageGroupId" | "MessageDeduplicationId"): string | undefined {
  const id = optionalString(input, name);
  if (id === undefined || (id === "" && name === "MessageGroupId") || printableIdPattern.test(id)) return id;
  throw sqsErrors.invalidParameterValue(
    `Value ${id} for parameter ${name} is invalid. Reason: ${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
  );
}

function sendFields(message: PreparedMessage) {
  return {
    body: Buffer.from(message.body, "utf8"),
    attributes: message.attributes.attributes,
    typedAttributes: message.attributes.typedAttributes,
    ...(message.delaySeconds === undefined ? {} : { delay: durationFromMs(message.delaySeconds * 1000) }),
    ...(message.messageGroupId === undefined ? {} : { messageGroupId: message.messageGroupId }),
    ...(message.deduplicationId === undefined ? {} : { deduplicationId: message.deduplicationId }),
    ...(message.system.traceHeader === undefined ? {} : { traceHeader: message.system.traceHeader }),
  };
}

/** SendMessage's answer, and a SendMessageBatch entry's: a FIFO queue's carries the sequence number. */
function sentAnswer(sent: Sent, message: PreparedMessage): SqsOutput {
  const md5OfAttributes = message.attributes.md5;
  const md5OfSystemAttributes = message.system.md5;
  return {
    MessageId: sent.messageId,
    MD5OfMessageBody: md5OfBody(message.body),
    ...(md5OfAttributes === undefined ? {} : { MD5OfMessageAttributes: md5OfAttributes }),
    ...(md5OfSystemAttributes === undefined ? {} : { MD5OfMessageSystemAttributes: md5OfSystemAttributes }),
    ...(sent.sequenceNumber === "" ? {} : { SequenceNumber: sent.sequenceNumber }),
  };
}

/**
 * SQS's answer to a batch whose FIFO entry lacks an id the queue needs:
 * AWS words a missing group as SendMessage does, but with the code
 * InvalidParameterValue; undefined for any other failure.
 */
function missingFifoId(error: unknown): SqsError | undefined {
  switch (brokerFailure(error)?.reason) {
    case "MESSAGE_GROUP_ID_REQUIRED":
      return sqsErrors.invalidParameterValue("The request must contain the parameter MessageGroupId.");
    case "DEDUPLICATION_ID_REQUIRED":
      return sqsErrorOf({ reason: "DEDUPLICATION_ID_REQUIRED", message: "" });
    default:
      return undefined;
  }
}

/** Which entry of a SendBatch the broker refused, by its field violation ("entries[2].body"). */
function failedEntryIndex(error: unknown): number | undefined {
  const failure = brokerFailure(error);
  if (failure === undefined) return undefined;
  for (const violation of failure.violations) {
    const match = /^entries\[(\d+)\]/.exec(violation.field);
    if (match !== null) return Number(match[1]);
  }
  return undefined;
}
