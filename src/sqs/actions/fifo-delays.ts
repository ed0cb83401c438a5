import { fifoNameSuffix } from "../../protocol/fifo-name-suffix.js";
import { brokerFailure } from "../../service/broker-failure.js";
import { sqsErrors, type SqsError } from "../sqs-error.js";
import type { SqsActionContext } from "./action-context.js";

/*
 * A FIFO queue takes no per-message delay. SQS ignores DelaySeconds=0 there
 * (the queue's delay applies) and refuses any other value; the broker
 * refuses both (INVALID_ARGUMENT on the delay). A 0 to a queue whose name
 * ends in .fifo (only a FIFO queue's may) is left out before the send;
 * otherwise a send names its delay as the client gave it, and only a delay
 * the broker refused is looked at again: sends to standard queues pay
 * nothing for this rule.
 */

/** The message without a DelaySeconds=0 that SQS ignores, where its queue's name says it is FIFO. */
export function withoutIgnoredDelay<T extends { readonly delaySeconds: number | undefined }>(
  message: T,
  queue: string,
): T {
  return message.delaySeconds === 0 && queue.endsWith(fifoNameSuffix)
    ? { ...message, delaySeconds: undefined }
    : message;
}

/**
 * Whether `error` is the broker refusing, at `field` ("delay",
 * "entries[2].delay"), the per-message delay of a send to a FIFO queue.
 */
export async function isFifoDelayRefusal(
  error: unknown,
  field: string,
  seconds: number | undefined,
  queue: string,
  context: SqsActionContext,
): Promise<boolean> {
  if (seconds === undefined) return false;
  const failure = brokerFailure(error);
  if (failure?.reason !== "INVALID_ARGUMENT" || failure.violations[0]?.field !== field) return false;
  // No queue's retention is under a 0 delay: only a FIFO queue refuses it. A longer one may be past a standard queue's retention.
  return seconds === 0 || (await isFifoQueue(queue, context));
}

/** SQS's answer to a per-message delay other than 0 on a FIFO queue. */
export function fifoDelayRefused(seconds: number): SqsError {
  return sqsErrors.invalidParameterValue(
    `Value ${seconds} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`,
  );
}

/** Whether `queue` is a FIFO queue: by its name's suffix, or else by asking the broker. */
export async function isFifoQueue(queue: string, context: SqsActionContext): Promise<boolean> {
  // Only a FIFO queue may have the suffix; one made over gRPC may lack it.
  if (queue.endsWith(fifoNameSuffix)) return true;
  const { queue: info } = await context.queues.call("getQueue", { name: queue });
  return info?.config?.fifo === true;
}
