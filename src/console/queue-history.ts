import type { Registry } from "prom-client";
import type { QueueInfo } from "../broker/types.js";
import { histogramQuantile, type BucketCounts } from "./histogram-quantile.js";

/** What the history reads at each sample: the broker's queues (those it serves) and its metrics. */
export interface HistorySource {
  allQueues(): QueueInfo[];
  readonly registry: Registry;
}

/** The broker's counters the console turns into rates, by the name the console's API gives each. */
const rateCounters = {
  sent: "holdshelf_messages_sent_total",
  received: "holdshelf_messages_received_total",
  deleted: "holdshelf_messages_deleted_total",
  deadLettered: "holdshelf_messages_dead_lettered_total",
} as const;
export type RateName = keyof typeof rateCounters;
const rateNames = Object.keys(rateCounters) as RateName[];
const processingHistogram = "holdshelf_message_processing_seconds";

/** How much history is kept: enough for a few minutes of sparklines at little memory per queue. */
export interface HistoryShape {
  readonly sampleIntervalMs: number;
  readonly samples: number;
}
export const defaultHistoryShape: HistoryShape = { sampleIntervalMs: 10_000, samples: 60 };

// The processing-time quantiles cover between one and two of these spans: a
// snapshot of the histogram is kept from the start of the previous span.
const processingSpanMs = 5 * 60_000;
// The oldest message's age is "growing" when it rose by at least this share of the time passed, over this many samples.
const growingSamples = 6;
const growingShare = 0.9;
// ...and is past this: a queue whose oldest message is seconds old is keeping up.
const growingFloorMs = 60_000;
// A queue is "dead-lettering" when its dead-letter counter rose within this many recent samples.
const deadLetteringSamples = 30;

/** A queue's recorded series, oldest sample first. Rates are messages a second over the sample before. */
export interface QueueSeriesView {
  readonly t: number[];
  readonly visible: number[];
  readonly inFlight: number[];
  readonly delayed: number[];
  readonly oldestAgeMs: (number | null)[];
  readonly sent: number[];
  readonly received: number[];
  readonly deleted: number[];
  readonly deadLettered: number[];
}

/** Processing time (delivery to delete) quantiles over a recent window. */
export interface ProcessingView {
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly count: number;
  readonly windowMs: number;
}

/** One sample of one queue: its counts, and its counters' running totals (rates come from their differences). */
interface Sample {
  readonly t: number;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldestAgeMs: number | null;
  readonly totals: Record<RateName, number>;
}

/** One queue's ring of samples and its processing-time snapshots. */
class QueueRing {
  readonly samples: Sample[] = [];
  /** Bucket counts at the start of the previous and the current span, and when each was taken. */
  spanStarts: { at: number; buckets: BucketCounts }[] = [];

  push(sample: Sample, limit: number): void {
    this.samples.push(sample);
    if (this.samples.length > limit) this.samples.shift();
  }
}

/**
 * The recent history of each queue this broker serves, sampled from the
 * broker's own counts and Prometheus counters, for the console's
 * sparklines and charts. It lives in memory only: a restart starts it
 * afresh, and in cluster mode each broker has history only for the queues
 * it serves. Prometheus keeps the long-term record.
 */
export class QueueHistory {
  private readonly rings = new Map<string, QueueRing>();
  /** When the first sample was taken: a queue's window reaches back to it until its spans begin. */
  private firstSampleAt: number | undefined;

  constructor(
    private readonly source: HistorySource,
    readonly shape: HistoryShape = defaultHistoryShape,
  ) {}

  /** Takes one sample of every queue at `now`; queues gone since are forgotten. */
  async sample(now: number): Promise<void> {
    this.firstSampleAt ??= now;
    const totals = await this.readTotals();
    const buckets = await this.readProcessingBuckets();
    const seen = new Set<string>();
    for (const queue of this.source.allQueues()) {
      seen.add(queue.name);
      let ring = this.rings.get(queue.name);
      if (ring === undefined) this.rings.set(queue.name, (ring = new QueueRing()));
      ring.push(
        {
          t: now,
          visible: queue.counts.visible,
          inFlight: queue.counts.inFlight,
          delayed: queue.counts.delayed,
          oldestAgeMs: queue.oldestMessageAgeMs ?? null,
          totals: byRate((rate) => totals[rate].get(queue.name) ?? 0),
        },
        this.shape.samples,
      );
      this.rollSpan(ring, now, buckets.get(queue.name) ?? emptyBuckets());
    }
    for (const name of this.rings.keys()) if (!seen.has(name)) this.rings.delete(name);
  }

  /** The queue's series, or undefined when this broker has no samples of it. */
  series(queue: string): QueueSeriesView | undefined {
    const ring = this.rings.get(queue);
    if (ring === undefined || ring.samples.length === 0) return undefined;
    const { samples } = ring;
    const rate = (name: RateName) =>
      samples.map((sample, i) => {
        const before = samples[i - 1];
        if (before === undefined) return 0;
        const seconds = (sample.t - before.t) / 1000;
        // A counter that went down was reset (its queue deleted and made again): no rate for that step.
        const delta = sample.totals[name] - before.totals[name];
        return seconds > 0 && delta > 0 ? delta / seconds : 0;
      });
    return {
      t: samples.map((s) => s.t),
      visible: samples.map((s) => s.visible),
      inFlight: samples.map((s) => s.inFlight),
      delayed: samples.map((s) => s.delayed),
      oldestAgeMs: samples.map((s) => s.oldestAgeMs),
      sent: rate("sent"),
      received: rate("received"),
      deleted: rate("deleted"),
      deadLettered: rate("deadLettered"),
    };
  }

  /** Whether the queue sent messages to its dead-letter queue within the recent samples. */
  isDeadLettering(queue: string): boolean {
    const samples = this.rings.get(queue)?.samples ?? [];
    const recent = samples.slice(-deadLetteringSamples - 1);
    return recent.length > 1 && recent[recent.length - 1]!.totals.deadLettered > recent[0]!.totals.deadLettered;
  }

  /**
   * Whether the oldest message's age kept rising with the clock over the last
   * samples and is past a minute: nobody is taking the front of the queue.
   */
  isOldestAgeGrowing(queue: string): boolean {
    const samples = (this.rings.get(queue)?.samples ?? []).slice(-growingSamples);
    if (samples.length < growingSamples) return false;
    for (let i = 1; i < samples.length; i++) {
      const age = samples[i]!.oldestAgeMs;
      const before = samples[i - 1]!.oldestAgeMs;
      if (age === null || before === null || age < before) return false;
    }
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    return last.oldestAgeMs! >= growingFloorMs && last.oldestAgeMs! - first.oldestAgeMs! >= growingShare * (last.t - first.t);
  }

  /** p50 and p99 of processing time since the start of the previous span (one to two spans), from the histogram's buckets. */
  async processing(queue: string, now: number): Promise<ProcessingView> {
    const current = (await this.readProcessingBuckets()).get(queue) ?? emptyBuckets();
    const start = this.rings.get(queue)?.spanStarts[0];
    const window = start === undefined ? current : subtractBuckets(current, start.buckets);
    const count = window.counts[window.counts.length - 1] ?? 0;
    const quantile = (q: number): number | null => {
      const seconds = histogramQuantile(q, window);
      return seconds === undefined ? null : seconds * 1000;
    };
    // A queue made since the last sample has no span yet: everything it counted is since the history began.
    const since = start?.at ?? this.firstSampleAt ?? now;
    return { p50Ms: quantile(0.5), p99Ms: quantile(0.99), count, windowMs: now - since };
  }

  /** Starts a new span when the current one is over, keeping the previous span's start as the window's. */
  private rollSpan(ring: QueueRing, now: number, buckets: BucketCounts): void {
    const latest = ring.spanStarts[ring.spanStarts.length - 1];
    if (latest !== undefined && now - latest.at < processingSpanMs) return;
    ring.spanStarts = [...ring.spanStarts, { at: now, buckets }].slice(-2);
  }

  /** Each rate counter's value by queue, summed over any other labels (the dead-letter queue). */
  private async readTotals(): Promise<Record<RateName, Map<string, number>>> {
    const read = async (rate: RateName): Promise<Map<string, number>> => {
      const byQueue = new Map<string, number>();
      const metric = this.source.registry.getSingleMetric(rateCounters[rate]);
      if (metric === undefined) return byQueue;
      for (const { labels, value } of (await metric.get()).values) {
        const queue = labels.queue;
        if (typeof queue === "string") byQueue.set(queue, (byQueue.get(queue) ?? 0) + value);
      }
      return byQueue;
    };
    const values = await Promise.all(rateNames.map(read));
    return byRate((rate) => values[rateNames.indexOf(rate)]!);
  }

  /** The processing histogram's cumulative bucket counts by queue. */
  private async readProcessingBuckets(): Promise<Map<string, BucketCounts>> {
    const byQueue = new Map<string, { bounds: number[]; counts: number[] }>();
    const metric = this.source.registry.getSingleMetric(processingHistogram);
    if (metric === undefined) return byQueue;
    for (const entry of (await metric.get()).values) {
      // A histogram's values carry the series name they belong to (_bucket, _sum, _count).
      const { labels, value, metricName } = entry as typeof entry & { metricName?: string };
      if (metricName !== `${processingHistogram}_bucket` || typeof labels.queue !== "string") continue;
      let buckets = byQueue.get(labels.queue);
      if (buckets === undefined) byQueue.set(labels.queue, (buckets = { bounds: [], counts: [] }));
      buckets.bounds.push(labels.le === "+Inf" ? Infinity : Number(labels.le));
      buckets.counts.push(value);
    }
    return byQueue;
  }
}

function byRate<T>(valueOf: (rate: RateName) => T): Record<RateName, T> {
  return Object.fromEntries(rateNames.map((rate) => [rate, valueOf(rate)])) as Record<RateName, T>;
}

function emptyBuckets(): BucketCounts {
  return { bounds: [], counts: [] };
}

/** Counts that arrived since `before`; a histogram reset since (the queue made again) counts from zero. */
function subtractBuckets(now: BucketCounts, before: BucketCounts): BucketCounts {
  const same = before.bounds.length === now.bounds.length && before.counts.every((count, i) => count <= now.counts[i]!);
  return same ? { bounds: now.bounds, counts: now.counts.map((count, i) => count - before.counts[i]!) } : now;
}
