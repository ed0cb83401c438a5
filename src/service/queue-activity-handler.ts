import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  ListQueueActivityResponseSchema,
  type ListQueueActivityRequest,
  type ListQueueActivityResponse,
  type QueueActivity,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { ClusterPeer } from "../cluster/queue-router.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { decodePageToken, defaultPageSize, encodePageToken, maxPageSize } from "../protocol/queue-pages.js";
import type { Clock } from "../time/clock.js";
import type { CallContext } from "./call-context.js";

/** A queue's sampled series, oldest first (the console's QueueHistory keeps them). */
export interface ActivitySeries {
  readonly t: readonly number[];
  readonly visible: readonly number[];
  readonly inFlight: readonly number[];
  readonly delayed: readonly number[];
  readonly oldestAgeMs: readonly (number | null)[];
  readonly sent: readonly number[];
  readonly received: readonly number[];
  readonly deleted: readonly number[];
  readonly deadLettered: readonly number[];
  readonly arrived: readonly number[];
}

/** What ListQueueActivity reads: the history of the queues this broker serves. */
export interface QueueActivitySource {
  readonly shape: { readonly sampleIntervalMs: number };
  sampledQueues(): string[];
  latestSeries(queue: string, samples: number): ActivitySeries | undefined;
  processing(
    queue: string,
    now: number,
  ): { p50Ms: number | null; p99Ms: number | null; count: number; windowMs: number } | undefined;
  isDeadLettering(queue: string): boolean | undefined;
  isOldestAgeGrowing(queue: string): boolean | undefined;
}

/** The most names one request may filter on. */
export const maxActivityNames = 100;
/** The largest max_samples: more than any history keeps. */
const maxSamplesLimit = 1000;

type ListQueueActivity = (
  request: ListQueueActivityRequest,
  signal: AbortSignal,
  context: CallContext,
) => Promise<ListQueueActivityResponse>;

/**
 * ListQueueActivity as one broker answers it: the queues it sampled (those
 * it serves), that the caller may see and the request names, a page in name
 * order. The cluster's answer merges every owner's (queue-activity-fan-out.ts).
 */
export function listQueueActivityHandler(
  source: QueueActivitySource,
  self: () => ClusterPeer,
  clock: Clock,
): ListQueueActivity {
  return async (request, _signal, context) => {
    const { size, after } = checkActivityRequest(request);
    const named = request.names.length === 0 ? undefined : new Set(request.names);
    const names = source
      .sampledQueues()
      .filter((name) => name > after && (named === undefined || named.has(name)))
      .filter((name) => context.canSee === undefined || context.canSee(name))
      .sort();
    const kept = names.slice(0, size);
    const now = clock.now();
    const { nodeId, address } = self();
    const activity = kept.flatMap((name) => {
      const found = activityOf(source, name, request.maxSamples, now);
      return found === undefined ? [] : [{ ...found, nodeId, address }];
    });
    return create(ListQueueActivityResponseSchema, {
      activity,
      nextPageToken: names.length > size && kept.length > 0 ? encodePageToken(kept[kept.length - 1]!) : "",
    });
  };
}

/** The request's page size and the name its page starts after; INVALID_ARGUMENT naming a field out of bounds. */
export function checkActivityRequest(request: ListQueueActivityRequest): { size: number; after: string } {
  if (request.pageSize < 0 || request.pageSize > maxPageSize)
    throw invalidArgument("page_size", `must be between 0 and ${maxPageSize}`);
  if (request.maxSamples < 0 || request.maxSamples > maxSamplesLimit)
    throw invalidArgument("max_samples", `must be between 0 and ${maxSamplesLimit}`);
  if (request.names.length > maxActivityNames)
    throw invalidArgument("names", `must name at most ${maxActivityNames} queues`);
  const after = request.pageToken === "" ? "" : decodePageToken(request.pageToken);
  if (after === undefined) throw invalidArgument("page_token", "is not a token this service returned");
  return { size: request.pageSize || defaultPageSize, after };
}

function activityOf(
  source: QueueActivitySource,
  name: string,
  maxSamples: number,
  now: number,
): Omit<QueueActivity, "$typeName" | "nodeId" | "address"> | undefined {
  const series = source.latestSeries(name, maxSamples);
  const processing = source.processing(name, now);
  if (series === undefined || processing === undefined) return undefined;
  const integers = (values: readonly number[]): bigint[] => values.map((value) => BigInt(Math.round(value)));
  return {
    queue: name,
    sampleInterval: durationFromMs(source.shape.sampleIntervalMs),
    sampleTimeMs: integers(series.t),
    visible: integers(series.visible),
    inFlight: integers(series.inFlight),
    delayed: integers(series.delayed),
    oldestMessageAgeMs: series.oldestAgeMs.map((age) => (age === null ? -1n : BigInt(Math.round(age)))),
    sentPerSecond: [...series.sent],
    receivedPerSecond: [...series.received],
    deletedPerSecond: [...series.deleted],
    deadLetteredPerSecond: [...series.deadLettered],
    arrivedPerSecond: [...series.arrived],
    ...(processing.p50Ms === null ? {} : { processingP50Ms: processing.p50Ms }),
    ...(processing.p99Ms === null ? {} : { processingP99Ms: processing.p99Ms }),
    processingCount: BigInt(processing.count),
    processingWindow: durationFromMs(Math.max(0, Math.round(processing.windowMs))),
    deadLettering: source.isDeadLettering(name) ?? false,
    oldestAgeGrowing: source.isOldestAgeGrowing(name) ?? false,
  };
}
