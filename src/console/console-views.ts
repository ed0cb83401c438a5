// The console API's JSON forms of the broker's answers (docs/console.md "API"):
// plain numbers and epoch milliseconds, where protobuf's JSON has strings for
// 64-bit counts and RFC 3339 for times, so the page does no conversions.
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { DurationSchema, timestampMs, type Duration, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MessageMoveTaskStatus, type MessageMoveTask } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { QueueConfigSchema, type Queue, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { consoleErrors } from "./console-error.js";

/** A queue as the console shows it. */
export interface QueueView {
  readonly name: string;
  readonly config: JsonValue;
  readonly stats: { visible: number; inFlight: number; delayed: number; oldestMessageAgeMs: number | null };
  readonly createTime: number | null;
  readonly updateTime: number | null;
  readonly deadLetterSourceQueues: string[];
}

export function queueView(queue: Queue): QueueView {
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
    // "cannot decode field holdshelf.v1.QueueConfig.max_in_flight from JSON: expected number (int32), got "x"".
    const field = /field holdshelf\.v1\.(\w+)\.(\w+)/.exec(message);
    const unknownKey = /key "([^"]{1,60})" is unknown/.exec(message);
    const path = field !== null ? configPath(field[1]!, field[2]!) : unknownKey !== null ? `${unknownKey[1]}` : undefined;
    const description = message.replace(/^cannot decode (field|message) [\w.]+ from JSON: /, "");
    throw consoleErrors.invalid(path === undefined ? "config" : `config.${path}`, unknownKey !== null ? "is not a queue setting" : description);
  }
}

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

/** Where a nested config message sits in QueueConfig, for its fields' paths. */
function configPath(message: string, field: string): string {
  if (message === "RedrivePolicy") return `redrive_policy.${field}`;
  if (message === "RetryPolicy") return `retry_policy.${field}`;
  return field;
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
