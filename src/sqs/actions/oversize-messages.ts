import { brokerFailure } from "../../service/broker-failure.js";
import { sqsErrors, type SqsError } from "../sqs-error.js";
import type { SqsActionContext } from "./action-context.js";

/**
 * SQS's answer to a message over its queue's MaximumMessageSize, in AWS's
 * words, which name the queue's limit: SendMessage's call fails with "One or
 * more parameters are invalid", a SendMessageBatch entry with "… cannot be
 * validated". Undefined for any other failure. The broker's refusal
 * (MESSAGE_TOO_LARGE at "body" or "entries[2].body") is rare, so the limit
 * is read from the queue then, not before every send.
 */
export async function oversizeRefusal(
  error: unknown,
  queue: string,
  context: SqsActionContext,
  scope: "call" | "entry",
): Promise<SqsError | undefined> {
  const failure = brokerFailure(error);
  if (failure?.reason !== "MESSAGE_TOO_LARGE") return undefined;
  if (!/^(?:entries\[\d+\]\.)?body$/.test(failure.violations[0]?.field ?? "")) return undefined;
  const { queue: found } = await context.queues.call("getQueue", { name: queue });
  const limit = found?.config?.maxMessageBytes;
  if (!limit) return undefined;
  const verdict = scope === "call" ? "are invalid" : "cannot be validated";
  return sqsErrors.invalidParameterValue(
    `One or more parameters ${verdict}. Reason: Message must be shorter than ${limit} bytes.`,
  );
}
