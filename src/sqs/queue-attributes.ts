import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampMs, type Duration } from "@bufbuild/protobuf/wkt";
import {
  QueueConfigSchema,
  RedrivePolicySchema,
  type Queue,
  type QueueConfig,
} from "../../gen/holdshelf/v1/queue_pb.js";
import {
  applyFifoAttributes,
  fifoAttributeDiffers,
  fifoAttributeNames,
  fifoAttributeValues,
  isFifoAttribute,
} from "./fifo-attributes.js";
import { checkedPolicy } from "./queue-policy.js";
import type { QueueUrls } from "./queue-urls.js";
import {
  applySseAttributes,
  isSseAttribute,
  sseAttributeDiffers,
  sseAttributeNames,
  sseAttributeValues,
} from "./sse-attributes.js";
import { parseIntegerAttribute } from "./integer-attribute.js";
import { sqsErrors } from "./sqs-error.js";

/** The queue attributes SQS clients may set, with the bounds SQS gives them (in seconds or bytes). */
const settable = {
  VisibilityTimeout: [0, 43_200],
  DelaySeconds: [0, 900],
  MessageRetentionPeriod: [60, 1_209_600],
  MaximumMessageSize: [1024, 1_048_576],
  ReceiveMessageWaitTimeSeconds: [0, 20],
} as const;
type NumericAttribute = keyof typeof settable;

/** Attributes a client may read but not set. */
const readOnly = [
  "ApproximateNumberOfMessages",
  "ApproximateNumberOfMessagesNotVisible",
  "ApproximateNumberOfMessagesDelayed",
  "QueueArn",
  "CreatedTimestamp",
  "LastModifiedTimestamp",
] as const;

/**
 * SQS attributes holdshelf does not have, each with the reason it gives.
 * Reading them returns nothing (as SQS does for an attribute a queue does
 * not have); setting them is InvalidAttributeName with the reason.
 */
const refused: Readonly<Record<string, string>> = {
  RedriveAllowPolicy: "any queue may use any queue as its dead-letter queue",
};

/** Every attribute name GetQueueAttributes knows, in the order "All" returns them. */
export const queueAttributeNames: readonly string[] = [
  ...readOnly,
  ...Object.keys(settable),
  "RedrivePolicy",
  ...fifoAttributeNames,
  "Policy",
  ...sseAttributeNames,
  ...Object.keys(refused),
];

/**
 * Applies SQS queue attributes to a queue configuration (a copy; the
 * original is untouched), each checked as SQS checks it. Settings SQS does
 * not have (max_in_flight, max_lease_duration, retry_policy, tags) keep the
 * values they had, so SetQueueAttributes never resets a gRPC user's choices.
 * The configuration's `fifo` says the queue's kind, which the FIFO
 * attributes are checked against (fifo-attributes.ts).
 */
export function applyQueueAttributes(
  config: QueueConfig,
  attributes: ReadonlyMap<string, string>,
  urls: QueueUrls,
): QueueConfig {
  const next = create(QueueConfigSchema, config);
  for (const [name, value] of attributes) {
    if (Object.hasOwn(settable, name)) {
      const seconds = parseBounded(name as NumericAttribute, value);
      if (name === "MaximumMessageSize") next.maxMessageBytes = seconds;
      else setDuration(next, name as Exclude<NumericAttribute, "MaximumMessageSize">, durationFromMs(seconds * 1000));
    } else if (name === "RedrivePolicy") {
      applyRedrivePolicy(next, value, urls);
    } else if (name === "Policy") {
      // Kept and shown, never enforced: the access keys' file decides (docs/sqs.md).
      next.accessPolicy = checkedPolicy(value);
    } else if (isFifoAttribute(name) || isSseAttribute(name)) {
      // Applied together after the loop: FifoThroughputLimit is checked against DeduplicationScope.
    } else if ((readOnly as readonly string[]).includes(name)) {
      throw sqsErrors.invalidAttributeName(`Attribute ${name} is read-only.`);
    } else if (Object.hasOwn(refused, name)) {
      throw sqsErrors.invalidAttributeName(`Attribute ${name} is not supported: ${refused[name]}.`);
    } else {
      throw sqsErrors.invalidAttributeName(`Unknown Attribute ${name}.`);
    }
  }
  applyFifoAttributes(next, attributes);
  applySseAttributes(next, attributes);
  return next;
}

/** The QueueConfig field (an update_mask path) each settable attribute sets; FifoThroughputLimit is not stored. */
const configFieldOf: Readonly<Record<string, string>> = {
  VisibilityTimeout: "visibility_timeout",
  DelaySeconds: "delay",
  MessageRetentionPeriod: "retention",
  MaximumMessageSize: "max_message_bytes",
  ReceiveMessageWaitTimeSeconds: "receive_wait_time",
  RedrivePolicy: "redrive_policy",
  FifoQueue: "fifo",
  ContentBasedDeduplication: "content_based_deduplication",
  DeduplicationScope: "deduplication_scope",
  Policy: "access_policy",
  KmsMasterKeyId: "sqs_encryption",
  KmsDataKeyReusePeriodSeconds: "sqs_encryption",
  SqsManagedSseEnabled: "sqs_encryption",
};

/**
 * The update_mask paths of the attributes a SetQueueAttributes names, for
 * attributes `applyQueueAttributes` accepted: an UpdateQueue with them
 * changes only those fields, whatever another call changes meanwhile.
 */
export function attributeFields(attributes: ReadonlyMap<string, string>): string[] {
  // The three encryption attributes are one field: named once, as a mask must.
  const fields = [...attributes.keys()].flatMap((name) =>
    Object.hasOwn(configFieldOf, name) ? [configFieldOf[name]!] : [],
  );
  return [...new Set(fields)];
}

/**
 * Whether an existing queue already has the attributes a CreateQueue names
 * (SQS's rule: a CreateQueue of an existing queue succeeds unless an
 * attribute it names has another value).
 */
export function conflictingAttribute(
  queue: Queue,
  attributes: ReadonlyMap<string, string>,
  urls: QueueUrls,
): string | undefined {
  const current = queueAttributes(queue, urls, [...attributes.keys()]);
  const config = queue.config ?? create(QueueConfigSchema);
  for (const [name, value] of attributes) {
    const mine = current[name] ?? "";
    if (isFifoAttribute(name)) {
      if (fifoAttributeDiffers(config, name, value)) return name;
    } else if (isSseAttribute(name)) {
      if (sseAttributeDiffers(config, name, value)) return name;
    } else if (name === "RedrivePolicy" ? !sameRedrivePolicy(mine, value) : mine !== normalizedNumber(value)) {
      return name;
    }
  }
  return undefined;
}

/** GetQueueAttributes' answer: the names asked for ("All" for every one); unknown names are InvalidAttributeName. */
export function queueAttributes(queue: Queue, urls: QueueUrls, names: readonly string[]): Record<string, string> {
  for (const name of names) {
    if (name !== "All" && !queueAttributeNames.includes(name))
      throw sqsErrors.invalidAttributeName(`Unknown Attribute ${name}.`);
  }
  const all = names.includes("All");
  const wanted = (name: string): boolean => all || names.includes(name);
  const config = queue.config ?? create(QueueConfigSchema);
  const stats = queue.stats;
  const created = queue.createTime === undefined ? 0 : timestampMs(queue.createTime);
  const modified = queue.updateTime === undefined ? created : timestampMs(queue.updateTime);
  const values: Record<string, string | undefined> = {
    ApproximateNumberOfMessages: String(stats?.visible ?? 0n),
    ApproximateNumberOfMessagesNotVisible: String(stats?.inFlight ?? 0n),
    ApproximateNumberOfMessagesDelayed: String(stats?.delayed ?? 0n),
    QueueArn: urls.arnOf(queue.name),
    CreatedTimestamp: epochSeconds(created),
    LastModifiedTimestamp: epochSeconds(modified),
    VisibilityTimeout: seconds(config.visibilityTimeout),
    DelaySeconds: seconds(config.delay),
    MessageRetentionPeriod: seconds(config.retention),
    MaximumMessageSize: String(config.maxMessageBytes),
    ReceiveMessageWaitTimeSeconds: seconds(config.receiveWaitTime),
    RedrivePolicy:
      config.redrivePolicy === undefined || config.redrivePolicy.deadLetterQueue === ""
        ? undefined
        : JSON.stringify({
            deadLetterTargetArn: urls.arnOf(config.redrivePolicy.deadLetterQueue),
            maxReceiveCount: config.redrivePolicy.maxReceiveCount,
          }),
    ...fifoAttributeValues(config),
    Policy: config.accessPolicy === "" ? undefined : config.accessPolicy,
    ...sseAttributeValues(config),
  };
  const answer: Record<string, string> = {};
  for (const name of queueAttributeNames) {
    const value = values[name];
    if (value !== undefined && wanted(name)) answer[name] = value;
  }
  return answer;
}

function parseBounded(name: NumericAttribute, value: string): number {
  const [min, max] = settable[name];
  return parseIntegerAttribute(name, value, min, max);
}

function setDuration(
  config: QueueConfig,
  name: Exclude<NumericAttribute, "MaximumMessageSize">,
  duration: Duration,
): void {
  switch (name) {
    case "VisibilityTimeout":
      config.visibilityTimeout = duration;
      break;
    case "DelaySeconds":
      config.delay = duration;
      break;
    case "MessageRetentionPeriod":
      config.retention = duration;
      break;
    case "ReceiveMessageWaitTimeSeconds":
      config.receiveWaitTime = duration;
      break;
  }
}

/** RedrivePolicy's JSON ({"deadLetterTargetArn": ARN, "maxReceiveCount": 1-1000}); an empty value removes the policy, as in SQS. */
function applyRedrivePolicy(config: QueueConfig, value: string, urls: QueueUrls): void {
  if (value.trim() === "") {
    config.redrivePolicy = undefined;
    return;
  }
  const invalid = (reason: string): Error =>
    sqsErrors.invalidAttributeValue(`Value ${value} for parameter RedrivePolicy is invalid. Reason: ${reason}`);
  let policy: unknown;
  try {
    policy = JSON.parse(value);
  } catch {
    throw invalid("Redrive policy is not a valid JSON map.");
  }
  if (typeof policy !== "object" || policy === null || Array.isArray(policy))
    throw invalid("Redrive policy is not a valid JSON map.");
  const { deadLetterTargetArn: arn, maxReceiveCount: count } = policy as Record<string, unknown>;
  if (typeof arn !== "string")
    throw invalid("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.");
  // SQS's own console writes maxReceiveCount as a string, SDK users as a number.
  const maxReceiveCount =
    typeof count === "number" ? count : typeof count === "string" && /^\d+$/.test(count) ? Number(count) : NaN;
  if (!(Number.isInteger(maxReceiveCount) && maxReceiveCount >= 1 && maxReceiveCount <= 1000)) {
    throw invalid("Invalid value for maxReceiveCount: must be an integer from 1 to 1000.");
  }
  config.redrivePolicy = create(RedrivePolicySchema, {
    deadLetterQueue: urls.queueOfArn(arn, "RedrivePolicy"),
    maxReceiveCount,
  });
}

function sameRedrivePolicy(current: string, requested: string): boolean {
  if (current === "" || requested.trim() === "") return current === "" && requested.trim() === "";
  try {
    const a = JSON.parse(current) as Record<string, unknown>;
    const b = JSON.parse(requested) as Record<string, unknown>;
    return (
      a["deadLetterTargetArn"] === b["deadLetterTargetArn"] &&
      Number(a["maxReceiveCount"]) === Number(b["maxReceiveCount"])
    );
  } catch {
    return false;
  }
}

function normalizedNumber(value: string): string {
  return /^\s*\d+\s*$/.test(value) ? String(Number(value)) : value;
}

function seconds(duration: Duration | undefined): string {
  if (duration === undefined) return "0";
  return String(Number(duration.seconds));
}

function epochSeconds(ms: number): string {
  return String(Math.floor(ms / 1000));
}
