import { queueConfigPathOf } from "../protocol/queue-config-paths.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { ViolationList } from "../errors/violation-list.js";
import { maxQueueTags, maxReceiveWaitMs, maxTagKeyCharacters, maxTagValueCharacters } from "../protocol/limits.js";
import { queueNamePattern } from "../protocol/queue-name-pattern.js";
import {
  checkAccessPolicy,
  checkSqsEncryption,
  sameSqsEncryption,
  type SqsEncryption,
  type SqsEncryptionInput,
} from "./sqs-queue-settings.js";

const second = 1000;
const hour = 3600 * second;
const day = 24 * hour;

/** Where messages go that keep failing, and after how many deliveries. */
export interface RedrivePolicy {
  readonly deadLetterQueue: string;
  readonly maxReceiveCount: number;
}

/** How long a message waits before a retry: min(max, min × 2^(receive count − 1)). */
export interface RetryPolicy {
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** A queue's numeric settings. Durations are in milliseconds. */
export interface QueueLimits {
  readonly visibilityTimeoutMs: number;
  readonly delayMs: number;
  readonly retentionMs: number;
  readonly maxMessageBytes: number;
  readonly receiveWaitTimeMs: number;
  readonly maxInFlight: number;
  readonly maxLeaseDurationMs: number;
}

/** Where a FIFO queue compares deduplication ids: across the queue, or within each message group. */
export type DeduplicationScope = "queue" | "messageGroup";

/** A FIFO queue's own settings. */
export interface FifoSettings {
  /** Sends without a deduplication id are deduplicated by their body's SHA-256. */
  readonly contentBasedDeduplication: boolean;
  readonly deduplicationScope: DeduplicationScope;
}

/** A queue's configuration, every field resolved; the policies are undefined when not set. */
export interface QueueConfig extends QueueLimits {
  readonly redrivePolicy: RedrivePolicy | undefined;
  readonly retryPolicy: RetryPolicy | undefined;
  /** Labels (SQS's queue tags) the broker keeps and shows but never reads. */
  readonly tags: Readonly<Record<string, string>>;
  /** Set on a FIFO queue (fixed at creation); undefined on a standard one. */
  readonly fifo?: FifoSettings | undefined;
  /** Amazon SQS's queue policy, kept and shown but never read; undefined when none. */
  readonly accessPolicy?: string | undefined;
  /** Amazon SQS's encryption attributes, kept and shown; undefined: SQS-managed encryption, the default. */
  readonly sqsEncryption?: SqsEncryption | undefined;
}

/** A configuration as a request gives it: an undefined field takes its default. */
export type QueueConfigInput = { readonly [K in keyof QueueLimits]?: number | undefined } & {
  readonly redrivePolicy?: RedrivePolicy | undefined;
  readonly retryPolicy?: RetryPolicy | undefined;
  /** Undefined means none. */
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** A FIFO queue; the two settings after it are for FIFO queues only. */
  readonly fifo?: boolean | undefined;
  readonly contentBasedDeduplication?: boolean | undefined;
  /** Undefined means "queue". */
  readonly deduplicationScope?: DeduplicationScope | undefined;
  /** Undefined or empty means none. */
  readonly accessPolicy?: string | undefined;
  /** Undefined means SQS-managed encryption, the default. */
  readonly sqsEncryption?: SqsEncryptionInput | undefined;
};

/** The numeric settings of a queue created with nothing set. */
export const defaultQueueLimits: QueueLimits = {
  visibilityTimeoutMs: 30 * second,
  delayMs: 0,
  retentionMs: 4 * day,
  // SQS's default since 2025, as its maximum: 1 MiB.
  maxMessageBytes: 1048576,
  receiveWaitTimeMs: 0,
  maxInFlight: 120000,
  maxLeaseDurationMs: 12 * hour,
};

/**
 * max_message_bytes's default before 0.2.0. Configurations are stored whole,
 * so queues created then keep it; and a whole configuration that leaves
 * max_message_bytes unset (see keepingEarlierDefaults) still means it for
 * such a queue, so an upgrade changes no existing queue's limit.
 */
export const earlierDefaultMaxMessageBytes = 262144;

/**
 * A whole configuration given for a queue (CreateQueue of it again,
 * UpdateQueue without update_mask, a queue definitions file), resolved from
 * `input`, with max_message_bytes kept at its earlier default where the
 * input leaves it unset and the existing queue (`current`) has it: such a
 * request meant that default when the queue was created, and a client's
 * create-if-missing must keep matching it. No other check depends on
 * max_message_bytes, so the resolved configuration needs no second check.
 */
export function keepingEarlierDefaults(
  config: QueueConfig,
  input: QueueConfigInput | undefined,
  current: { readonly maxMessageBytes: number } | undefined,
): QueueConfig {
  if (input?.maxMessageBytes !== undefined || current?.maxMessageBytes !== earlierDefaultMaxMessageBytes) return config;
  return { ...config, maxMessageBytes: earlierDefaultMaxMessageBytes };
}

/** The configuration of a queue created with nothing set. */
export const defaultQueueConfig: QueueConfig = {
  ...defaultQueueLimits,
  redrivePolicy: undefined,
  retryPolicy: undefined,
  tags: {},
};

/** Checks a queue name's form. Throws INVALID_ARGUMENT naming `field`. */
export function checkQueueName(name: string, field: string): void {
  if (!queueNamePattern.test(name)) {
    throw invalidArgument(
      field,
      'must be 1 to 80 characters of [A-Za-z0-9_-], or such a name ending in ".fifo" (80 in all)',
    );
  }
}

/** Bounds of a redrive policy's max_receive_count. */
export const maxReceiveCountBounds = [1, 1000] as const;
/** The longest retry backoff. */
export const maxBackoffMs = 12 * hour;

/** Fixed bounds of the fields whose bounds do not depend on other fields. */
const fixedBounds = {
  retentionMs: [60 * second, 14 * day],
  maxMessageBytes: [1024, 1048576],
  receiveWaitTimeMs: [0, maxReceiveWaitMs],
  maxInFlight: [1, 1000000],
  maxLeaseDurationMs: [1 * second, 7 * day],
} as const;

const limitKeys = Object.keys(defaultQueueLimits) as (keyof QueueLimits)[];

/**
 * Fills in defaults and checks every bound, naming each bad field as
 * `<prefix><field>`: one INVALID_ARGUMENT lists them all. Whether a redrive
 * policy's dead-letter queue exists is for the registry to check.
 */
export function resolveQueueConfig(input: QueueConfigInput | undefined, prefix = "config."): QueueConfig {
  const violations = new ViolationList();
  const resolved = checkQueueConfig(input, prefix, violations);
  violations.throwIfAny();
  return resolved;
}

/** resolveQueueConfig's checks, each bad field recorded in `violations`; the result is whole only when none is. */
export function checkQueueConfig(
  input: QueueConfigInput | undefined,
  prefix: string,
  violations: ViolationList,
): QueueConfig {
  const limits = { ...defaultQueueLimits };
  for (const key of limitKeys) {
    const value = input?.[key];
    if (value !== undefined) limits[key] = value;
  }
  /** Whether `value` is in bounds; records the field when not. */
  const check = (value: number, min: number, max: number, field: string, unit: "ms" | ""): boolean => {
    if (Number.isInteger(value) && value >= min && value <= max) return true;
    violations.add(prefix + field, `must be between ${describe(min, unit)} and ${describe(max, unit)}`);
    return false;
  };
  const checkLimit = (key: keyof QueueLimits, min: number, max: number): boolean =>
    check(limits[key], min, max, queueConfigPathOf[key], key.endsWith("Ms") ? "ms" : "");
  const inBounds = new Set<keyof QueueLimits>();
  for (const key of Object.keys(fixedBounds) as (keyof typeof fixedBounds)[]) {
    const [min, max] = fixedBounds[key];
    if (checkLimit(key, min, max)) inBounds.add(key);
  }
  // A bound taken from another field is checked only when that field is good: "between 0s and -5s" would mislead.
  if (inBounds.has("maxLeaseDurationMs")) checkLimit("visibilityTimeoutMs", 0, limits.maxLeaseDurationMs);
  if (inBounds.has("retentionMs")) checkLimit("delayMs", 0, limits.retentionMs);
  const { redrivePolicy, retryPolicy } = input ?? {};
  if (redrivePolicy !== undefined) {
    if (!queueNamePattern.test(redrivePolicy.deadLetterQueue)) {
      violations.add(`${prefix}redrive_policy.dead_letter_queue`, "must be the name of an existing queue");
    }
    const [min, max] = maxReceiveCountBounds;
    check(redrivePolicy.maxReceiveCount, min, max, "redrive_policy.max_receive_count", "");
  }
  if (retryPolicy !== undefined) {
    if (check(retryPolicy.minBackoffMs, 0, maxBackoffMs, "retry_policy.min_backoff", "ms"))
      check(retryPolicy.maxBackoffMs, retryPolicy.minBackoffMs, maxBackoffMs, "retry_policy.max_backoff", "ms");
  }
  const fifo = violations.collect(() => resolveFifoSettings(input, prefix));
  const accessPolicy = violations.collect(() => checkAccessPolicy(input?.accessPolicy, `${prefix}access_policy`));
  const sqsEncryption = violations.collect(() => checkSqsEncryption(input?.sqsEncryption, `${prefix}sqs_encryption`));
  return {
    ...limits,
    redrivePolicy: redrivePolicy && {
      deadLetterQueue: redrivePolicy.deadLetterQueue,
      maxReceiveCount: redrivePolicy.maxReceiveCount,
    },
    retryPolicy: retryPolicy && { minBackoffMs: retryPolicy.minBackoffMs, maxBackoffMs: retryPolicy.maxBackoffMs },
    tags: checkTags(input?.tags ?? {}, `${prefix}tags`, violations),
    // Left out of a standard queue's configuration, so its stored record stays as it was.
    ...(fifo === undefined ? {} : { fifo }),
    // Left out when unset, as fifo is, so that records of queues without them stay as they were.
    ...(accessPolicy === undefined ? {} : { accessPolicy }),
    ...(sqsEncryption === undefined ? {} : { sqsEncryption }),
  };
}

/** A FIFO queue's settings from a request; the FIFO-only settings on a standard queue are INVALID_ARGUMENT. */
function resolveFifoSettings(input: QueueConfigInput | undefined, prefix: string): FifoSettings | undefined {
  const { fifo = false, contentBasedDeduplication = false, deduplicationScope } = input ?? {};
  if (!fifo) {
    const violations = new ViolationList();
    if (contentBasedDeduplication) violations.add(`${prefix}content_based_deduplication`, "is for FIFO queues only");
    if (deduplicationScope !== undefined) violations.add(`${prefix}deduplication_scope`, "is for FIFO queues only");
    violations.throwIfAny();
    return undefined;
  }
  return { contentBasedDeduplication, deduplicationScope: deduplicationScope ?? "queue" };
}

/**
 * Checks a queue's tags and returns a copy: at most 50, keys of 1 to 128
 * characters and values of at most 256 (Unicode code points, as SQS counts
 * characters). Each bad tag is recorded naming it, e.g. config.tags["team"].
 */
function checkTags(
  tags: Readonly<Record<string, string>>,
  field: string,
  violations: ViolationList,
): Record<string, string> {
  const entries = Object.entries(tags);
  if (entries.length > maxQueueTags) violations.add(field, `must have at most ${maxQueueTags} tags`);
  for (const [key, value] of entries) {
    const keyLength = [...key].length;
    if (keyLength < 1 || keyLength > maxTagKeyCharacters) {
      violations.add(`${field}[${JSON.stringify(key)}]`, `keys must be 1 to ${maxTagKeyCharacters} characters`);
    } else if ([...value].length > maxTagValueCharacters) {
      violations.add(`${field}[${JSON.stringify(key)}]`, `values must be at most ${maxTagValueCharacters} characters`);
    }
  }
  // fromEntries defines own properties: a tag named "__proto__" stays a tag.
  return Object.fromEntries(entries);
}

/** Whether two resolved configurations are the same. */
export function sameQueueConfig(a: QueueConfig, b: QueueConfig): boolean {
  return (
    limitKeys.every((key) => a[key] === b[key]) &&
    a.redrivePolicy?.deadLetterQueue === b.redrivePolicy?.deadLetterQueue &&
    a.redrivePolicy?.maxReceiveCount === b.redrivePolicy?.maxReceiveCount &&
    a.retryPolicy?.minBackoffMs === b.retryPolicy?.minBackoffMs &&
    a.retryPolicy?.maxBackoffMs === b.retryPolicy?.maxBackoffMs &&
    sameTags(a.tags, b.tags) &&
    a.fifo?.contentBasedDeduplication === b.fifo?.contentBasedDeduplication &&
    a.fifo?.deduplicationScope === b.fifo?.deduplicationScope &&
    a.accessPolicy === b.accessPolicy &&
    sameSqsEncryption(a.sqsEncryption, b.sqsEncryption)
  );
}

/** Whether two sets of tags are the same, in whatever order they were given. */
function sameTags(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** Whether a message received `receiveCount` times has had every delivery the queue's redrive policy allows. */
export function isSpent(config: QueueConfig, receiveCount: number): boolean {
  return config.redrivePolicy !== undefined && receiveCount >= config.redrivePolicy.maxReceiveCount;
}

function describe(value: number, unit: "ms" | ""): string {
  return unit === "ms" ? `${value / second}s` : String(value);
}
