import { DeduplicationScope, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { sqsErrors } from "./sqs-error.js";

/** The queue attributes of FIFO queues alone, in the order GetQueueAttributes' "All" returns them. */
export const fifoAttributeNames = [
  "FifoQueue",
  "ContentBasedDeduplication",
  "DeduplicationScope",
  "FifoThroughputLimit",
] as const;

const scopes: Readonly<Record<string, DeduplicationScope>> = {
  queue: DeduplicationScope.QUEUE,
  messageGroup: DeduplicationScope.MESSAGE_GROUP,
};
const throughputLimits = ["perQueue", "perMessageGroupId"];

/** Whether a name is one of the FIFO attributes. */
export function isFifoAttribute(name: string): boolean {
  return (fifoAttributeNames as readonly string[]).includes(name);
}

/**
 * The kind of queue a CreateQueue asks for: its FifoQueue attribute, "true"
 * or "false" (absent: false). A false one is taken, though AWS has answered
 * it with InvalidAttributeName on standard queues: code that works against
 * AWS never sends it there, and code written for other emulators does.
 */
export function requestedFifo(attributes: ReadonlyMap<string, string>): boolean {
  const value = attributes.get("FifoQueue");
  return value !== undefined && parseBoolean("FifoQueue", value);
}

/**
 * Applies the FIFO attributes a request names to `config` (a copy the
 * caller owns), whose `fifo` already says the queue's kind. On a standard
 * queue only FifoQueue=false is taken; the rest are InvalidAttributeName,
 * as SQS answers for attributes a standard queue does not have. FifoQueue
 * cannot change (InvalidAttributeValue on a FIFO queue; a standard queue
 * knows no FifoQueue=true: InvalidAttributeName). FifoThroughputLimit is checked
 * and not stored: holdshelf has no throughput quota to choose, and reports
 * it from DeduplicationScope (`fifoAttributeValues`).
 */
export function applyFifoAttributes(config: QueueConfig, attributes: ReadonlyMap<string, string>): void {
  for (const name of fifoAttributeNames) {
    const value = attributes.get(name);
    if (value === undefined) continue;
    if (name === "FifoQueue") {
      if (parseBoolean(name, value) === config.fifo) continue;
      // AWS's words: a standard queue has no such attribute; a FIFO queue's cannot change.
      if (!config.fifo) throw sqsErrors.invalidAttributeName("Unknown Attribute FifoQueue.");
      throw sqsErrors.invalidAttributeValue(
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
      );
    }
    if (!config.fifo) throw notOnStandardQueue(name);
    if (name === "ContentBasedDeduplication") config.contentBasedDeduplication = parseBoolean(name, value);
    if (name === "DeduplicationScope") config.deduplicationScope = parseScope(value);
  }
  const limit = attributes.get("FifoThroughputLimit");
  if (limit === undefined) return;
  if (!throughputLimits.includes(limit)) {
    throw sqsErrors.invalidAttributeValue(
      "Invalid value for the parameter FifoThroughputLimit. Reason: Must be perQueue or perMessageGroupId.",
    );
  }
  if (limit === "perMessageGroupId" && config.deduplicationScope !== DeduplicationScope.MESSAGE_GROUP) {
    throw sqsErrors.invalidAttributeValue(
      "Invalid value for the parameter FifoThroughputLimit. Reason: perMessageGroupId is allowed only when DeduplicationScope is messageGroup.",
    );
  }
}

/** A FIFO queue's FIFO attributes as GetQueueAttributes reports them; none for a standard queue, as in SQS. */
export function fifoAttributeValues(config: QueueConfig): Partial<Record<(typeof fifoAttributeNames)[number], string>> {
  if (!config.fifo) return {};
  const perGroup = config.deduplicationScope === DeduplicationScope.MESSAGE_GROUP;
  return {
    FifoQueue: "true",
    ContentBasedDeduplication: String(config.contentBasedDeduplication),
    DeduplicationScope: perGroup ? "messageGroup" : "queue",
    FifoThroughputLimit: perGroup ? "perMessageGroupId" : "perQueue",
  };
}

/**
 * Whether a CreateQueue's FIFO attribute differs from an existing queue's
 * (QueueAlreadyExists). FifoThroughputLimit never does: holdshelf keeps no
 * value of it to differ from, and a repeated CreateQueue must succeed.
 */
export function fifoAttributeDiffers(config: QueueConfig, name: string, requested: string): boolean {
  switch (name) {
    case "FifoQueue":
      return parseBoolean(name, requested) !== config.fifo;
    case "ContentBasedDeduplication":
      return !config.fifo || parseBoolean(name, requested) !== config.contentBasedDeduplication;
    case "DeduplicationScope":
      return fifoAttributeValues(config).DeduplicationScope !== requested;
    default:
      return false;
  }
}

/** A FIFO attribute named for a standard queue, worded as AWS words each. */
function notOnStandardQueue(name: string): Error {
  return name === "ContentBasedDeduplication"
    ? sqsErrors.invalidAttributeName(`Unknown Attribute ${name}.`)
    : sqsErrors.invalidAttributeName(`You can specify the ${name} only when FifoQueue is set to true.`);
}

function parseBoolean(name: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (lower !== "true" && lower !== "false") {
    throw sqsErrors.invalidAttributeValue(`Invalid value for the parameter ${name}. Reason: Must be true or false.`);
  }
  return lower === "true";
}

function parseScope(value: string): DeduplicationScope {
  const scope = Object.hasOwn(scopes, value) ? scopes[value] : undefined;
  if (scope === undefined) {
    throw sqsErrors.invalidAttributeValue(
      "Invalid value for the parameter DeduplicationScope. Reason: Must be queue or messageGroup.",
    );
  }
  return scope;
}
