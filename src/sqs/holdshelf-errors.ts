import { brokerFailure, type BrokerFailure } from "../errors/broker-failure.js";
import { SqsError, sqsErrors } from "./sqs-error.js";

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
export function sqsErrorOf(failure: Pick<BrokerFailure, "reason" | "message">): SqsError {
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
    case "DEAD_LETTER_QUEUE_NOT_FOUND":
      return sqsErrors.invalidParameterValue(`Value for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist (${message}).`);
    case "INTERNAL":
    case "":
      return sqsErrors.internalError();
    default:
      // INVALID_ARGUMENT, MESSAGE_TOO_LARGE, QUEUE_IN_USE, LEASE_LIMIT_EXCEEDED and
      // the rest: the caller's request cannot be served as it is; the broker's
      // message says why, naming the field.
      return sqsErrors.invalidParameterValue(message);
  }
}
