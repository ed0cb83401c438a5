import { brokerFailure, type BrokerFailure } from "../service/broker-failure.js";
import type { FieldViolation } from "../protocol/error-reasons.js";
import { SqsError, sqsErrors } from "./sqs-error.js";

/** A broker failure as the mapping reads it: a batch entry's result carries no violations. */
type Failure = Pick<BrokerFailure, "reason" | "message"> & { readonly violations?: readonly FieldViolation[] };

/**
 * Broker request fields whose INVALID_ARGUMENT answers SQS clients read in
 * their own terms: the SQS parameter, and the subject of the broker's
 * description. A batch entry's field ("entries[2].message_group_id") is the
 * same field.
 */
const sqsParameters: Readonly<Record<string, { readonly parameter: string; readonly subject: string }>> = {
  message_group_id: { parameter: "MessageGroupId", subject: "MessageGroupId" },
  deduplication_id: { parameter: "MessageDeduplicationId", subject: "MessageDeduplicationId" },
  delay: { parameter: "DelaySeconds", subject: "DelaySeconds" },
  // A redrive policy or move task between a FIFO and a standard queue, or a queue that is its own dead-letter queue.
  "config.redrive_policy.dead_letter_queue": { parameter: "RedrivePolicy", subject: "the dead-letter queue" },
  destination_queue: { parameter: "DestinationArn", subject: "the destination queue" },
};

/**
 * The SQS error a broker failure is answered with, when the action has no
 * more specific answer of its own (each action maps the reasons whose SQS
 * answer depends on the action, such as LEASE_SUPERSEDED). Anything that is
 * not a broker error is InternalError, and `logUnexpected` hears of it.
 */
export function toSqsError(error: unknown, logUnexpected: (error: unknown) => void): SqsError {
  if (error instanceof SqsError) return error;
  const failure = brokerFailure(error);
  if (failure === undefined) {
    logUnexpected(error);
    return sqsErrors.internalError();
  }
  if (failure.reason === "INTERNAL" || failure.reason === "") logUnexpected(error);
  return sqsErrorOf(failure);
}

/** The SQS error of a broker failure's reason (a batch entry's, or a call's). */
export function sqsErrorOf(failure: Failure): SqsError {
  const { reason, message } = failure;
  switch (reason) {
    case "QUEUE_NOT_FOUND":
      return sqsErrors.queueDoesNotExist();
    case "QUEUE_ALREADY_EXISTS":
      return sqsErrors.queueNameExists(message);
    case "RECEIPT_HANDLE_INVALID":
      return sqsErrors.receiptHandleIsInvalid(message);
    case "PERMISSION_DENIED":
      return sqsErrors.accessDenied(message);
    // SQS's own in-flight limit answers OverLimit, and so does its queue quota.
    case "TOO_MANY_IN_FLIGHT":
    case "TOO_MANY_QUEUES":
      return sqsErrors.overLimit(message);
    // Capacity that frees up by itself, and a broker that cannot serve this
    // moment: a 503, which every SDK retries with backoff.
    case "BROKER_FULL":
    case "TOO_MANY_WAITING_RECEIVES":
    case "TOO_MANY_STREAMS":
    case "SHUTTING_DOWN":
    case "STORAGE_UNAVAILABLE":
    case "QUEUE_MOVING":
      return sqsErrors.serviceUnavailable(message);
    // FIFO sends, worded as SQS words them.
    case "MESSAGE_GROUP_ID_REQUIRED":
      return sqsErrors.missingParameter("The request must contain the parameter MessageGroupId.");
    case "DEDUPLICATION_ID_REQUIRED":
      return sqsErrors.invalidParameterValue(
        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
      );
    case "NOT_A_FIFO_QUEUE": {
      // The broker names the group id when both are set, as the first field at fault.
      const parameter = namedParameter(failure)?.parameter ?? "MessageGroupId";
      return sqsErrors.invalidParameterValue(
        `Value for parameter ${parameter} is invalid. Reason: The request include parameter that is not valid for this queue type.`,
      );
    }
    case "INVALID_ARGUMENT": {
      const named = namedParameter(failure);
      if (named === undefined) return sqsErrors.invalidParameterValue(message);
      return sqsErrors.invalidParameterValue(
        `Value for parameter ${named.parameter} is invalid. Reason: ${named.subject} ${named.description}.`,
      );
    }
    case "DEAD_LETTER_QUEUE_NOT_FOUND":
      return sqsErrors.invalidParameterValue(
        `Value for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist (${message}).`,
      );
    case "INTERNAL":
    case "":
      return sqsErrors.internalError();
    default:
      // MESSAGE_TOO_LARGE, QUEUE_IN_USE, LEASE_LIMIT_EXCEEDED and
      // the rest: the caller's request cannot be served as it is; the broker's
      // message says why, naming the field.
      return sqsErrors.invalidParameterValue(message);
  }
}

/** The SQS parameter of a failure's first field violation, if SQS clients know that field by another name. */
function namedParameter(failure: Failure): { parameter: string; subject: string; description: string } | undefined {
  const violation = failure.violations?.[0];
  if (violation === undefined) return undefined;
  const field = violation.field.replace(/^entries\[\d+\]\./, "");
  const named = Object.hasOwn(sqsParameters, field) ? sqsParameters[field] : undefined;
  return named && { ...named, description: violation.description };
}
