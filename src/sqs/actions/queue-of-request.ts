import { missing, optionalString, type SqsInput } from "../sqs-input.js";
import type { SqsActionContext } from "./action-context.js";

/** The queue an action works on: its QueueUrl parameter, else the queue URL it was posted to. */
export function queueOfRequest(input: SqsInput, context: SqsActionContext): string {
  const url = optionalString(input, "QueueUrl");
  if (url !== undefined && url !== "") return context.urls.queueOfUrl(url);
  if (context.pathQueue !== undefined) return context.pathQueue;
  throw missing("QueueUrl");
}
