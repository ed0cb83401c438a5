import type { QueueActivity } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { durationMs } from "./console-views.js";

/** Processing time (delivery to delete) quantiles over a recent window, as the queue page shows them. */
export interface ProcessingView {
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly count: number;
  readonly windowMs: number;
}

/** The processing quantiles of a queue's activity. */
export function processingView(activity: QueueActivity): ProcessingView {
  return {
    p50Ms: activity.processingP50Ms ?? null,
    p99Ms: activity.processingP99Ms ?? null,
    count: Number(activity.processingCount),
    windowMs: activity.processingWindow === undefined ? 0 : durationMs(activity.processingWindow),
  };
}
