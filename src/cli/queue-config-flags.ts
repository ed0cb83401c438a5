import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { DeduplicationScope, type QueueConfigSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { parseDurationFlag } from "./duration-flag.js";
import { fifoConfigFromFlags } from "./fifo-flags.js";
import { UsageError } from "./usage-error.js";

/** The values parseArgs gives for queueConfigOptionTable. */
export interface QueueConfigFlagValues {
  readonly "visibility-timeout"?: string | undefined;
  readonly delay?: string | undefined;
  readonly retention?: string | undefined;
  readonly "max-message-bytes"?: string | undefined;
  readonly "receive-wait-time"?: string | undefined;
  readonly "max-in-flight"?: string | undefined;
  readonly "max-lease-duration"?: string | undefined;
  readonly "dead-letter-queue"?: string | undefined;
  readonly "max-receive-count"?: string | undefined;
  readonly "no-dead-letter-queue"?: boolean | undefined;
  readonly "min-backoff"?: string | undefined;
  readonly "max-backoff"?: string | undefined;
  readonly "no-retry-policy"?: boolean | undefined;
  readonly tag?: readonly string[] | undefined;
  readonly "no-tags"?: boolean | undefined;
  readonly fifo?: boolean | undefined;
  readonly "content-based-deduplication"?: boolean | undefined;
  readonly "no-content-based-deduplication"?: boolean | undefined;
  readonly "deduplication-scope"?: string | undefined;
}

/** A queue configuration from the flags, and the QueueConfig fields they name (UpdateQueue's update_mask). */
export interface QueueConfigFromFlags {
  readonly config: MessageInitShape<typeof QueueConfigSchema>;
  readonly paths: readonly string[];
}

// Each plain setting's flag, its QueueConfig field (the mask path) and its kind.
const plainSettings = [
  ["visibility-timeout", "visibility_timeout", "visibilityTimeout", "duration"],
  ["delay", "delay", "delay", "duration"],
  ["retention", "retention", "retention", "duration"],
  ["max-message-bytes", "max_message_bytes", "maxMessageBytes", "count"],
  ["receive-wait-time", "receive_wait_time", "receiveWaitTime", "duration"],
  ["max-in-flight", "max_in_flight", "maxInFlight", "count"],
  ["max-lease-duration", "max_lease_duration", "maxLeaseDuration", "duration"],
] as const;

/**
 * The configuration `queue create` or `queue update` sends. Each policy is
 * set whole, so its two flags go together: on update, a named policy
 * replaces the queue's whole policy, and one flag alone would silently reset
 * the other half. Update names only the fields whose flags were given, and
 * needs at least one. Throws UsageError.
 */
export function queueConfigFromFlags(values: QueueConfigFlagValues, action: "create" | "update"): QueueConfigFromFlags {
  const config: Record<string, unknown> = {};
  const paths: string[] = [];
  for (const [flag, path, field, kind] of plainSettings) {
    const text = values[flag];
    if (text === undefined) continue;
    config[field] = kind === "duration" ? durationFromMs(parseDurationFlag(text, flag)) : wholeNumber(text, flag);
    paths.push(path);
  }
  const policy = (
    path: string,
    pair: readonly [string | undefined, string | undefined],
    flags: readonly [string, string],
    remove: string,
    removed: boolean | undefined,
    build: (first: string, second: string) => unknown,
  ): void => {
    const [first, second] = pair;
    const given = first !== undefined || second !== undefined;
    if (removed === true) {
      if (action === "create") throw new UsageError(`--${remove} is for queue update`);
      if (given) throw new UsageError(`--${remove} cannot go with --${flags[0]} or --${flags[1]}`);
      paths.push(path);
      return;
    }
    if (!given) return;
    if (first === undefined || second === undefined) {
      throw new UsageError(`--${flags[0]} and --${flags[1]} go together: the ${path.replace("_", " ")} is set whole`);
    }
    config[path === "redrive_policy" ? "redrivePolicy" : "retryPolicy"] = build(first, second);
    paths.push(path);
  };
  policy(
    "redrive_policy",
    [values["dead-letter-queue"], values["max-receive-count"]],
    ["dead-letter-queue", "max-receive-count"],
    "no-dead-letter-queue",
    values["no-dead-letter-queue"],
    (deadLetterQueue, count) => ({ deadLetterQueue, maxReceiveCount: wholeNumber(count, "max-receive-count") }),
  );
  policy(
    "retry_policy",
    [values["min-backoff"], values["max-backoff"]],
    ["min-backoff", "max-backoff"],
    "no-retry-policy",
    values["no-retry-policy"],
    (min, max) => ({
      minBackoff: durationFromMs(parseDurationFlag(min, "min-backoff")),
      maxBackoff: durationFromMs(parseDurationFlag(max, "max-backoff")),
    }),
  );
  const tags = values.tag ?? [];
  if (values["no-tags"] === true) {
    if (action === "create") throw new UsageError("--no-tags is for queue update");
    if (tags.length > 0) throw new UsageError("--no-tags cannot go with --tag");
    paths.push("tags");
  } else if (tags.length > 0) {
    config.tags = Object.fromEntries(tags.map((pair) => keyValue(pair, "tag")));
    paths.push("tags");
  }
  const contentOff = values["no-content-based-deduplication"] === true;
  if (contentOff && action === "create") throw new UsageError("--no-content-based-deduplication is for queue update");
  if (contentOff && values["content-based-deduplication"] === true)
    throw new UsageError("--content-based-deduplication cannot go with --no-content-based-deduplication");
  const fifo = fifoConfigFromFlags({
    fifo: values.fifo === true,
    "content-based-deduplication": values["content-based-deduplication"] === true,
    "deduplication-scope": values["deduplication-scope"],
  });
  if (action === "create") return { config: { ...config, ...fifo }, paths };
  if (values.fifo === true) {
    config.fifo = true;
    paths.push("fifo");
  }
  if (values["content-based-deduplication"] === true || contentOff) {
    config.contentBasedDeduplication = !contentOff;
    paths.push("content_based_deduplication");
  }
  if (fifo.deduplicationScope !== DeduplicationScope.UNSPECIFIED) {
    config.deduplicationScope = fifo.deduplicationScope;
    paths.push("deduplication_scope");
  }
  if (paths.length === 0)
    throw new UsageError("queue update needs at least one setting to change: it changes only the settings given");
  return { config, paths };
}

/** A key=value flag's pair; the value may be empty, the key may not. */
export function keyValue(pair: string, flag: string): [string, string] {
  const at = pair.indexOf("=");
  if (at <= 0) throw new UsageError(`--${flag} takes key=value, not "${pair}"`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

function wholeNumber(text: string, flag: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`--${flag} takes a whole number`);
  return Number(text);
}
