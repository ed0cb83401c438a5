// The console API's JSON forms of the broker's answers (docs/console.md "API"):
// plain numbers and epoch milliseconds, where protobuf's JSON has strings for
// 64-bit counts and RFC 3339 for times, so the page does no conversions.
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { DurationSchema, timestampMs, type Duration, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MessageMoveTaskStatus, type MessageMoveTask } from "../../gen/holdshelf/v1/queue_service_pb.js";
import {
  DeduplicationScope,
  DeduplicationScopeSchema,
  QueueConfigSchema,
  type Queue,
  type QueueConfig,
} from "../../gen/holdshelf/v1/queue_pb.js";
import { consoleErrors } from "./console-error.js";
import type { QueuePermissions } from "./console-permissions.js";
import { checkEnumJson } from "./console-input.js";

/** A queue as the console shows it. */
export interface QueueView {
  readonly name: string;
  readonly config: JsonValue;
  readonly stats: { visible: number; inFlight: number; delayed: number; oldestMessageAgeMs: number | null };
  readonly createTime: number | null;
  readonly updateTime: number | null;
  readonly deadLetterSourceQueues: string[];
  /** A FIFO queue's settings; null for a standard queue. */
  readonly fifo: FifoView | null;
  /** What the session's token may do on the queue. */
  readonly permissions: QueuePermissions;
}

/** A FIFO queue's settings as the console shows them. */
export interface FifoView {
  readonly contentBasedDeduplication: boolean;
  readonly deduplicationScope: "queue" | "messageGroup";
}

/** A queue's FIFO settings, or null for a standard queue. */
export function fifoView(config: QueueConfig | undefined): FifoView | null {
  if (config?.fifo !== true) return null;
  return {
    contentBasedDeduplication: config.contentBasedDeduplication,
    // The broker fills in QUEUE, its default, so UNSPECIFIED is not seen here.
    deduplicationScope: config.deduplicationScope === DeduplicationScope.MESSAGE_GROUP ? "messageGroup" : "queue",
  };
}

/** A queue's view, with what the session's token may do on it. */
export function queueView(queue: Queue, permissions: QueuePermissions): QueueView {
  const stats = queue.stats;
  return {
    name: queue.name,
    config: toJson(QueueConfigSchema, queue.config ?? fromJson(QueueConfigSchema, {})),
    stats: {
      visible: Number(stats?.visible ?? 0),
      inFlight: Number(stats?.inFlight ?? 0),
      delayed: Number(stats?.delayed ?? 0),
      oldestMessageAgeMs: stats?.oldestMessageAge === undefined ? null : durationMs(stats.oldestMessageAge),
    },
    createTime: msOf(queue.createTime),
    updateTime: msOf(queue.updateTime),
    deadLetterSourceQueues: queue.deadLetterSourceQueues,
    fifo: fifoView(queue.config),
    permissions,
  };
}

/**
 * A queue configuration from the page's JSON (protobuf's JSON form of
 * QueueConfig, durations as "30s"). A value protobuf cannot read is an
 * INVALID_ARGUMENT naming the field, as the broker names the fields it refuses.
 */
export function queueConfigOf(json: unknown): QueueConfig {
  if (json === undefined || json === null) return fromJson(QueueConfigSchema, {});
  if (typeof json !== "object" || Array.isArray(json)) throw consoleErrors.invalid("config", "must be an object");
  checkEnumJson(
    (json as Record<string, unknown>).deduplicationScope,
    "config.deduplication_scope",
    deduplicationScopeNames,
  );
  // protobuf-es does not say which duration it could not read, so each is read alone first.
  for (const [path, value] of durationFields(json as Record<string, unknown>)) {
    try {
      fromJson(DurationSchema, value as JsonValue);
    } catch {
      throw consoleErrors.invalid(`config.${path}`, 'must be a duration such as "30s" or "0.5s"');
    }
  }
  try {
    return fromJson(QueueConfigSchema, json as JsonValue);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // "cannot decode field holdshelf.v1.QueueConfig.max_in_flight from JSON: expected number (int32), got "x"", or of a
    // whole message: "cannot decode message holdshelf.v1.RedrivePolicy from JSON: key "x" is unknown" (or: "x").
    const field = /^cannot decode field holdshelf\.v1\.(\w+)\.(\w+) from JSON: /.exec(message);
    if (field !== null)
      throw consoleErrors.invalid(
        `config.${configPath(field[1]!, field[2]!)}`,
        withoutValue(message.slice(field[0].length)),
      );
    const whole = /^cannot decode message holdshelf\.v1\.(\w+) from JSON: /.exec(message);
    if (whole === null) throw consoleErrors.invalid("config", withoutValue(message));
    const at = ["config", messagePath(whole[1]!)].filter((part) => part !== "").join(".");
    // A key named by the path when it is short and plain; else the message it is in.
    const unknownKey = /: key "([^"]{1,60})" is unknown$/.exec(message);
    if (unknownKey !== null) throw consoleErrors.invalid(`${at}.${unknownKey[1]}`, "is not a queue setting");
    throw consoleErrors.invalid(
      at,
      message.endsWith(" is unknown") ? "has a key that is not a queue setting" : "must be an object",
    );
  }
}

/**
 * protobuf's description without the value it could not read ("expected
 * number (int32), got "NaN"" becomes "expected number (int32)"): the page
 * shows the value in its field, and an echo of a request's text such as
 * "undefined" would read as the console's own failure (test/hostile/error-leaks.ts).
 */
function withoutValue(description: string): string {
  return description.replace(/, got [\s\S]*$/, "");
}

// protobuf's JSON names of DeduplicationScope's values.
const deduplicationScopeNames = DeduplicationScopeSchema.values.map((value) => value.name);

/** The config's duration values present, by their proto paths. */
function durationFields(config: Record<string, unknown>): [string, unknown][] {
  const found: [string, unknown][] = [];
  const add = (path: string, value: unknown): void => {
    if (value !== undefined && value !== null) found.push([path, value]);
  };
  for (const [json, proto] of topLevelDurations) add(proto, config[json]);
  const retry = config.retryPolicy;
  if (typeof retry === "object" && retry !== null) {
    add("retry_policy.min_backoff", (retry as Record<string, unknown>).minBackoff);
    add("retry_policy.max_backoff", (retry as Record<string, unknown>).maxBackoff);
  }
  return found;
}
const topLevelDurations = [
  ["visibilityTimeout", "visibility_timeout"],
  ["delay", "delay"],
  ["retention", "retention"],
  ["receiveWaitTime", "receive_wait_time"],
  ["maxLeaseDuration", "max_lease_duration"],
] as const;

/** A config field's path under "config", by its message and name: "redrive_policy.max_receive_count". */
function configPath(message: string, field: string): string {
  const at = messagePath(message);
  return at === "" ? field : `${at}.${field}`;
}

/** Where a config message sits under "config": "" for QueueConfig itself. */
function messagePath(message: string): string {
  if (message === "RedrivePolicy") return "redrive_policy";
  if (message === "RetryPolicy") return "retry_policy";
  return "";
}

/** A move task as the console shows it; the rate is its average since it started (over a second at least), while it runs. */
export interface MoveTaskView {
  readonly taskHandle: string | null;
  readonly status: "RUNNING" | "COMPLETED" | "CANCELLED" | "FAILED" | "UNSPECIFIED";
  readonly sourceQueue: string;
  readonly destinationQueue: string | null;
  readonly maxPerSecond: number | null;
  readonly movedCount: number;
  readonly toMoveCount: number;
  readonly failureReason: string | null;
  readonly startTime: number | null;
  readonly ratePerSecond: number | null;
}

export function moveTaskView(task: MessageMoveTask, now: number): MoveTaskView {
  const startTime = msOf(task.startTime);
  const moved = Number(task.movedCount);
  const running = task.status === MessageMoveTaskStatus.RUNNING;
  // At least a second: a task moves its first batch at once, and a rate over a few milliseconds would be absurd.
  const seconds = startTime === null ? 0 : Math.max(1, (now - startTime) / 1000);
  return {
    taskHandle: task.taskHandle === "" ? null : task.taskHandle,
    status: (MessageMoveTaskStatus[task.status] ?? "UNSPECIFIED") as MoveTaskView["status"],
    sourceQueue: task.sourceQueue,
    destinationQueue: task.destinationQueue === "" ? null : task.destinationQueue,
    maxPerSecond: task.maxPerSecond === 0 ? null : task.maxPerSecond,
    movedCount: moved,
    toMoveCount: Number(task.toMoveCount),
    failureReason: task.failureReason === "" ? null : task.failureReason,
    startTime,
    ratePerSecond: running && seconds > 0 ? moved / seconds : null,
  };
}

export function msOf(timestamp: Timestamp | undefined): number | null {
  return timestamp === undefined ? null : Number(timestampMs(timestamp));
}

export function durationMs(duration: Duration): number {
  return Number(duration.seconds) * 1000 + Math.floor(duration.nanos / 1e6);
}
