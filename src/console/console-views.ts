// The console API's JSON forms of the broker's answers (docs/console.md "API"):
// plain numbers and epoch milliseconds, where protobuf's JSON has strings for
// 64-bit counts and RFC 3339 for times, so the page does no conversions.
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampMs, type Duration, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MessageMoveTaskStatus, type MessageMoveTask } from "../../gen/holdshelf/v1/queue_service_pb.js";
import {
  DeduplicationScope,
  QueueConfigSchema,
  type Queue,
  type QueueConfig,
} from "../../gen/holdshelf/v1/queue_pb.js";
import type { QueuePermissions } from "./console-permissions.js";

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
