import { DeduplicationScope } from "../../gen/holdshelf/v1/queue_pb.js";
import { UsageError } from "./usage-error.js";

// Spelled as flags are; SQS's own spelling, "messageGroup", is taken too.
const scopes = new Map<string, DeduplicationScope>([
  ["queue", DeduplicationScope.QUEUE],
  ["message-group", DeduplicationScope.MESSAGE_GROUP],
  ["messageGroup", DeduplicationScope.MESSAGE_GROUP],
]);

/**
 * The FIFO fields of a QueueConfig from the flags. Settings on a queue
 * without --fifo are passed on for the broker to refuse, naming the field.
 */
export function fifoConfigFromFlags(values: {
  fifo: boolean;
  "content-based-deduplication": boolean;
  "deduplication-scope"?: string | undefined;
}): { fifo: boolean; contentBasedDeduplication: boolean; deduplicationScope: DeduplicationScope } {
  const scopeText = values["deduplication-scope"];
  const deduplicationScope = scopeText === undefined ? DeduplicationScope.UNSPECIFIED : scopes.get(scopeText);
  if (deduplicationScope === undefined)
    throw new UsageError(`--deduplication-scope takes queue or message-group, not "${scopeText}"`);
  return { fifo: values.fifo, contentBasedDeduplication: values["content-based-deduplication"], deduplicationScope };
}

/** The FIFO fields of a SendRequest from the flags: empty when not given, which the wire reads as unset. */
export function fifoSendFromFlags(values: { group: string; "dedup-id": string }): {
  messageGroupId: string;
  deduplicationId: string;
} {
  return { messageGroupId: values.group, deduplicationId: values["dedup-id"] };
}
