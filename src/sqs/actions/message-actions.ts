import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { EntryResult, ReceivedMessage } from "../../../gen/holdshelf/v1/message_pb.js";
import { brokerFailure } from "../../service/broker-failure.js";
import { sqsErrorOf, toSqsError } from "../holdshelf-errors.js";
import { attributeNameFilter, attributesToSqs } from "../message-attributes.js";
import { md5OfBody, md5OfMessageAttributes } from "../message-digests.js";
import { traceHeaderName } from "../message-system-attributes.js";
import { bodyText } from "../message-text.js";
import { type SqsError, sqsErrors } from "../sqs-error.js";
import { optionalInteger, optionalString, requiredString, stringList, type SqsInput } from "../sqs-input.js";
import type { SqsAction, SqsActionContext, SqsOutput } from "./action-context.js";
import { batchEntries, batchFailure, type BatchFailure } from "./batch-entries.js";
import { receiveWithAttempt, type ReceiveCall } from "./receive-with-attempt.js";
import { isFifoQueue } from "./fifo-delays.js";
import { queueOfRequest } from "./queue-of-request.js";
import { checkAttemptId } from "./receive-attempts.js";

// SQS's bounds, in seconds.
const maxVisibilitySeconds = 43_200;
const maxWaitSeconds = 20;
const maxReceiveMessages = 10;

/** The system attributes ReceiveMessage can return ("All" is every one holdshelf has). */
const systemAttributeNames = new Set([
  "All",
  "SenderId",
  "SentTimestamp",
  "ApproximateReceiveCount",
  "ApproximateFirstReceiveTimestamp",
  "DeadLetterQueueSourceArn",
  // FIFO queues' own: absent from messages of standard queues, as in SQS.
  "SequenceNumber",
  "MessageDeduplicationId",
  "MessageGroupId",
  // X-Ray's and OpenTelemetry's trace header, on messages sent with one (either API).
  "AWSTraceHeader",
]);

/** ReceiveMessage: leases up to 10 messages, waiting up to 20 s for the first. */
export const receiveMessage: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  // AWS's words for these two bounds.
  const maxMessages =
    optionalInteger(
      input,
      "MaxNumberOfMessages",
      1,
      maxReceiveMessages,
      `Must be between 1 and ${maxReceiveMessages}, if provided.`,
    ) ?? 1;
  const visibility = optionalInteger(input, "VisibilityTimeout", 0, maxVisibilitySeconds);
  const wait = optionalInteger(
    input,
    "WaitTimeSeconds",
    0,
    maxWaitSeconds,
    `Must be >= 0 and <= ${maxWaitSeconds}, if provided.`,
  );
  // FIFO queues' way to repeat a receive whose answer was lost (receive-with-attempt.ts).
  const attemptId = optionalString(input, "ReceiveRequestAttemptId");
  const systemNames = [...stringList(input, "AttributeNames"), ...stringList(input, "MessageSystemAttributeNames")];
  for (const name of systemNames) {
    if (!systemAttributeNames.has(name)) throw sqsErrors.invalidAttributeName(`Unknown Attribute ${name}.`);
  }
  const wantedAttribute = attributeNameFilter(stringList(input, "MessageAttributeNames"));
  const call: ReceiveCall = {
    queue,
    maxMessages,
    ...(visibility === undefined ? {} : { visibilityTimeout: durationFromMs(visibility * 1000) }),
    ...(wait === undefined ? {} : { waitTime: durationFromMs(wait * 1000) }),
  };
  // SQS takes attempt ids on FIFO queues only, and ignores them on standard ones.
  const repeatable = attemptId !== undefined && (await isFifoQueue(queue, context));
  const messages = repeatable
    ? await receiveWithAttempt(
        context,
        { caller: context.callerName, queue, attemptId: checkAttemptId(attemptId) },
        call,
      )
    : (await context.queues.call("receive", call)).messages;
  if (messages.length === 0) return {};
  const asked = new Set(systemNames);
  const wantsSystem = (name: string): boolean => asked.has("All") || asked.has(name);
  return { Messages: messages.map((message) => receivedAnswer(message, context, wantsSystem, wantedAttribute)) };
};

/**
 * DeleteMessage. A handle of a message received again since (holdshelf's
 * LEASE_SUPERSEDED) succeeds without deleting, as SQS answers it.
 */
export const deleteMessage: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const receiptHandle = requiredString(input, "ReceiptHandle");
  try {
    await context.queues.call("delete", { queue, receiptHandle });
  } catch (error) {
    const reason = brokerFailure(error)?.reason;
    if (reason === "RECEIPT_HANDLE_INVALID") throw invalidHandle(receiptHandle);
    if (reason !== "LEASE_SUPERSEDED") throw error;
  }
  // The receive that answered this handle may no longer be repeated (receive-with-attempt.ts).
  context.receiveAttempts.settled(receiptHandle);
  return {};
};

/** DeleteMessageBatch: one durable write for the whole batch, with results entry by entry. */
export const deleteMessageBatch: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const entries = batchEntries(input, "Entries", "DeleteMessageBatchRequestEntry").map(({ id, input: entry }) => ({
    id,
    receiptHandle: requiredString(entry, "ReceiptHandle"),
  }));
  const { results } = await context.queues.call("deleteBatch", {
    queue,
    receiptHandles: entries.map((entry) => entry.receiptHandle),
  });
  const successful: SqsOutput[] = [];
  const failed: BatchFailure[] = [];
  entries.forEach(({ id, receiptHandle }, index) => {
    const result = results[index]!;
    if (result.code === 0 || result.reason === "LEASE_SUPERSEDED") {
      successful.push({ Id: id });
      context.receiveAttempts.settled(receiptHandle);
    } else
      failed.push(
        batchFailure(
          id,
          result.reason === "RECEIPT_HANDLE_INVALID" ? invalidHandle(receiptHandle) : sqsErrorOf(result),
        ),
      );
  });
  return { Successful: successful, Failed: failed };
};

/**
 * ChangeMessageVisibility. A handle of a message received again since
 * (LEASE_SUPERSEDED) succeeds and changes nothing, as SQS answers it: the
 * broker's fencing keeps the current delivery's lease as it is.
 */
export const changeMessageVisibility: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const receiptHandle = requiredString(input, "ReceiptHandle");
  const seconds = requiredVisibility(input);
  try {
    await context.queues.call("changeVisibility", {
      queue,
      receiptHandle,
      visibilityTimeout: durationFromMs(seconds * 1000),
    });
  } catch (error) {
    const failure = brokerFailure(error);
    if (failure === undefined) throw error;
    if (failure.reason !== "LEASE_SUPERSEDED") throw visibilityError(failure.reason, receiptHandle, seconds) ?? error;
  }
  context.receiveAttempts.settled(receiptHandle);
  return {};
};

/**
 * ChangeMessageVisibilityBatch. Each SQS entry has its own timeout, where a
 * holdshelf batch has one: entries are grouped by timeout, one durable
 * write per group. A superseded handle's entry succeeds and changes
 * nothing, as in ChangeMessageVisibility. Once a group is written, a later
 * group's failure (the broker stopping, storage down) fails only that
 * group's entries: the answer never hides changes made.
 */
export const changeMessageVisibilityBatch: SqsAction = async (input, context) => {
  const queue = queueOfRequest(input, context);
  const entries = batchEntries(input, "Entries", "ChangeMessageVisibilityBatchRequestEntry").map(
    ({ id, input: entry }) => ({
      id,
      receiptHandle: requiredString(entry, "ReceiptHandle"),
      seconds: requiredVisibility(entry),
    }),
  );
  const outcomes = new Map<string, SqsError | undefined>();
  for (const seconds of new Set(entries.map((entry) => entry.seconds))) {
    const group = entries.filter((entry) => entry.seconds === seconds);
    let results: EntryResult[];
    try {
      ({ results } = await context.queues.call("changeVisibilityBatch", {
        queue,
        receiptHandles: group.map((entry) => entry.receiptHandle),
        visibilityTimeout: durationFromMs(seconds * 1000),
      }));
    } catch (error) {
      if (outcomes.size === 0) throw error;
      const failure = toSqsError(error, () => undefined);
      for (const { id } of group) outcomes.set(id, failure);
      continue;
    }
    group.forEach(({ id, receiptHandle }, index) => {
      const result = results[index]!;
      const succeeded = result.code === 0 || result.reason === "LEASE_SUPERSEDED";
      if (succeeded) context.receiveAttempts.settled(receiptHandle);
      outcomes.set(
        id,
        succeeded ? undefined : (visibilityError(result.reason, receiptHandle, seconds) ?? sqsErrorOf(result)),
      );
    });
  }
  const successful: SqsOutput[] = [];
  const failed: BatchFailure[] = [];
  for (const { id } of entries) {
    const error = outcomes.get(id);
    if (error === undefined) successful.push({ Id: id });
    else failed.push(batchFailure(id, error));
  }
  return { Successful: successful, Failed: failed };
};

function receivedAnswer(
  message: ReceivedMessage,
  context: SqsActionContext,
  wantsSystem: (name: string) => boolean,
  wantedAttribute: (name: string) => boolean,
): SqsOutput {
  const body = bodyText(message.body);
  const system: Record<string, string> = {};
  const put = (name: string, value: string | undefined): void => {
    if (value !== undefined && wantsSystem(name)) system[name] = value;
  };
  put("SenderId", context.urls.accountId);
  put("SentTimestamp", message.sendTime === undefined ? undefined : String(timestampMs(message.sendTime)));
  put("ApproximateReceiveCount", String(message.receiveCount));
  put(
    "ApproximateFirstReceiveTimestamp",
    message.firstReceiveTime === undefined ? undefined : String(timestampMs(message.firstReceiveTime)),
  );
  put(
    "DeadLetterQueueSourceArn",
    message.deadLetterSourceQueue === "" ? undefined : context.urls.arnOf(message.deadLetterSourceQueue),
  );
  put("MessageGroupId", message.messageGroupId === "" ? undefined : message.messageGroupId);
  put("MessageDeduplicationId", message.deduplicationId === "" ? undefined : message.deduplicationId);
  put("SequenceNumber", message.sequenceNumber === "" ? undefined : message.sequenceNumber);
  put(traceHeaderName, message.traceHeader === "" ? undefined : message.traceHeader);
  const attributes = attributesToSqs(message.attributes, message.typedAttributes, wantedAttribute);
  const md5OfAttributes = md5OfMessageAttributes(attributes);
  return {
    MessageId: message.messageId,
    ReceiptHandle: message.receiptHandle,
    MD5OfBody: md5OfBody(body),
    Body: body,
    ...(Object.keys(system).length === 0 ? {} : { Attributes: system }),
    ...(md5OfAttributes === undefined
      ? {}
      : {
          MD5OfMessageAttributes: md5OfAttributes,
          MessageAttributes: Object.fromEntries(
            Object.entries(attributes).map(([name, value]) => [
              name,
              value.BinaryValue === undefined
                ? { DataType: value.DataType, StringValue: value.StringValue }
                : { DataType: value.DataType, BinaryValue: Buffer.from(value.BinaryValue).toString("base64") },
            ]),
          ),
        }),
  };
}

function requiredVisibility(input: SqsInput): number {
  const seconds = optionalInteger(input, "VisibilityTimeout", 0, maxVisibilitySeconds);
  if (seconds === undefined)
    throw sqsErrors.missingParameter("The request must contain the parameter VisibilityTimeout.");
  return seconds;
}

/** The SQS answer to a visibility change the broker refused, for the reasons whose answer SQS words its own way. */
function visibilityError(reason: string, receiptHandle: string, seconds: number): SqsError | undefined {
  switch (reason) {
    case "RECEIPT_HANDLE_INVALID":
      return invalidHandle(receiptHandle);
    case "MESSAGE_NOT_FOUND":
      return sqsErrors.invalidParameterValue(
        `Value ${receiptHandle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      );
    case "LEASE_LIMIT_EXCEEDED":
      return sqsErrors.invalidParameterValue(
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit the queue allows after its receive (max_lease_duration, 43200 seconds by default).`,
      );
    default:
      return undefined;
  }
}

function invalidHandle(receiptHandle: string): SqsError {
  return sqsErrors.receiptHandleIsInvalid(`The input receipt handle "${receiptHandle}" is not a valid receipt handle.`);
}
