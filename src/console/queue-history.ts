import { ignoredBrokerEvents, type BrokerEvents } from "../broker/broker-events.js";
import type { QueueInfo } from "../broker/types.js";
import { processingBuckets } from "../metrics/broker-metrics.js";
import { histogramQuantile } from "./histogram-quantile.js";
import type { ProcessingView } from "./processing-view.js";

/** What the history samples: the broker's queues (those it serves). */
export interface HistorySource {
  allQueues(): QueueInfo[];
}

/** How much history is kept: enough for a few minutes of sparklines at little memory per queue. */
export interface HistoryShape {
  readonly sampleIntervalMs: number;
  readonly samples: number;
}
export const defaultHistoryShape: HistoryShape = { sampleIntervalMs: 10_000, samples: 60 };

// The processing-time quantiles cover between one and two of these spans:
// the counts of the previous span are kept beside the current one's.
const processingSpanMs = 5 * 60_000;
// The oldest message's age is "growing" when it rose by at least this share of the time passed, over at least this long...
const growingForMs = 60_000;
const growingShare = 0.9;
// ...and is past this: a queue whose oldest message is seconds old is keeping up.
const growingFloorMs = 60_000;
// A queue is "dead-lettering" when it dead-lettered messages within this many recent samples.
const deadLetteringSamples = 30;

/**
 * The event counts the console turns into rates, by the name the console's API gives each.
 * "arrived": messages dead-lettered, redriven or moved into the queue, apart from "sent".
 */
export type RateName = "sent" | "received" | "deleted" | "deadLettered" | "arrived";
const rateNames: readonly RateName[] = ["sent", "received", "deleted", "deadLettered", "arrived"];

// A queue's columns, in the order they sit in its buffer: counts as Uint32
// (exact, unlike Float32 past 16 million), then the oldest age as Float32
// (NaN for none; 128 ms steps at 14 days, fine for a chart), then the
// processing-time bucket counts of the current span and of the previous one.
// The rate columns hold the events counted between a sample and the one
// before, not running totals, and the buckets one span's counts: no reset
// to detect, and they fit 32 bits.
const countColumns = {
  visible: 0,
  inFlight: 1,
  delayed: 2,
  sent: 3,
  received: 4,
  deleted: 5,
  deadLettered: 6,
  arrived: 7,
} as const;
const ageColumn = 8;
const columnCount = 9;
// Prometheus' form: ascending upper bounds in seconds, the last +Inf.
const bucketBounds: readonly number[] = [...processingBuckets, Infinity];
const bucketCount = bucketBounds.length;

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
  readonly arrived: number[];
}

/**
 * One queue's samples and processing-time counts, in one buffer: no object
 * per sample. Its samples sit in the history's slots, the newest in the
 * slot written last, since every queue is written at every sample.
 * At 60 samples that is 2,296 bytes of buffer; with the views, this object
 * and its map entry about 2.5 KB a queue (bench/console-history.ts).
 */
class QueueTrack {
  /** The queue's createTime once sampled: another one is a new queue of the same name. */
  createTime: number | undefined;
  /** How many of the history's latest slots hold this queue's samples. */
  samples = 0;
  /** The history's sample number that last saw the queue: one that misses it drops it. */
  sampledIn = 0;
  /** Events since the last sample, written into the rate columns at the next one. */
  readonly pending: Record<RateName, number> = { sent: 0, received: 0, deleted: 0, deadLettered: 0, arrived: 0 };
  /** When the current and the previous processing spans began (NaN before the first and second). */
  spanStart = NaN;
  previousSpanStart = NaN;
  /** The count columns, then the bucket counts: the current span's, then the previous span's. */
  readonly counts: Uint32Array;
  readonly ages: Float32Array;

  constructor(private readonly slots: number) {
    const buffer = new ArrayBuffer((columnCount * slots + 2 * bucketCount) * 4);
    this.counts = new Uint32Array(buffer);
    this.ages = new Float32Array(buffer, ageColumn * slots * 4, slots);
  }

  /** A count column's value in a slot. */
  count(column: number, slot: number): number {
    return this.counts[column * this.slots + slot]!;
  }

  /** Counts a delete's processing time in the current span's bucket (the histogram's `le`: the first bound not below it). */
  countProcessing(processingMs: number): void {
    const seconds = processingMs / 1000;
    let bucket = 0;
    // The last bound is +Inf, so this stops inside the buckets.
    while (seconds > bucketBounds[bucket]!) bucket++;
    this.counts[columnCount * this.slots + bucket]!++;
  }

  /** Starts the samples of a queue first seen, its processing window at `countedSince`; a later start drops what came before. */
  begin(createTime: number, countedSince: number, keepsCounts: boolean): void {
    this.createTime = createTime;
    this.spanStart = countedSince;
    if (!keepsCounts) this.counts.fill(0, columnCount * this.slots);
  }

  /** Writes the queue's counts, and the events since the last sample, into `slot`. */
  record(slot: number, sampleNumber: number, queue: QueueInfo): void {
    const { counts, slots, pending } = this;
    counts[countColumns.visible * slots + slot] = queue.counts.visible;
    counts[countColumns.inFlight * slots + slot] = queue.counts.inFlight;
    counts[countColumns.delayed * slots + slot] = queue.counts.delayed;
    // A queue's first sample has no sample before it, so no rate: what it counted before goes.
    const first = this.samples === 0;
    for (const rate of rateNames) {
      counts[countColumns[rate] * slots + slot] = first ? 0 : pending[rate];
      pending[rate] = 0;
    }
    this.ages[slot] = queue.oldestMessageAgeMs ?? NaN;
    this.samples = Math.min(this.samples + 1, slots);
    this.sampledIn = sampleNumber;
  }

  /** Starts a new processing span when the current one is over, keeping the one before. */
  rollSpan(now: number): void {
    if (now - this.spanStart < processingSpanMs) return;
    const current = columnCount * this.slots;
    this.counts.copyWithin(current + bucketCount, current, current + bucketCount);
    this.counts.fill(0, current, current + bucketCount);
    this.previousSpanStart = this.spanStart;
    this.spanStart = now;
  }

  /** Cumulative bucket counts over the current and the previous span, as histogramQuantile reads them. */
  processingCounts(): number[] {
    const current = columnCount * this.slots;
    let total = 0;
    return bucketBounds.map(
      (_, bucket) => (total += this.counts[current + bucket]! + this.counts[current + bucketCount + bucket]!),
    );
  }
}

/**
 * The recent history of each queue this broker serves, for the console's
 * sparklines, charts and marks: the broker's counts sampled at an
 * interval, and its events (the same ones its Prometheus metrics count)
 * counted between samples. It lives in memory only: a restart starts it
 * afresh, and in cluster mode each broker has history only for the queues
 * it serves. Prometheus keeps the long-term record.
 */
export class QueueHistory implements BrokerEvents {
  private source: HistorySource | undefined;
  private readonly tracks = new Map<string, QueueTrack>();
  /** Each slot's sample time; every queue's samples share them. */
  private readonly times: Float64Array;
  /** The slot the next sample writes. */
  private head = 0;
  private samplesTaken = 0;
  private lastSampleAt: number | undefined;
  /** Samples that span `growingForMs` at the interval: 7 at 10 s. */
  private readonly growingSamples: number;

  constructor(readonly shape: HistoryShape = defaultHistoryShape) {
    this.times = new Float64Array(shape.samples);
    this.growingSamples = Math.ceil(growingForMs / shape.sampleIntervalMs) + 1;
  }

  /** Sets the queues to sample (the broker, once it is open); until then a sample takes nothing. */
  observe(source: HistorySource): void {
    this.source = source;
  }

  sent(queue: string, count: number): void {
    this.track(queue).pending.sent += count;
  }

  delivered(queue: string): void {
    this.track(queue).pending.received++;
  }

  deleted(queue: string, processingMs: number): void {
    const track = this.track(queue);
    track.pending.deleted++;
    track.countProcessing(processingMs);
  }

  deadLettered(queue: string, _deadLetterQueue: string, count: number): void {
    this.track(queue).pending.deadLettered += count;
  }

  arrived(queue: string, count: number): void {
    this.track(queue).pending.arrived += count;
  }

  // The console shows nothing of these.
  readonly emptyReceive = ignoredBrokerEvents.emptyReceive;
  readonly movedByTask = ignoredBrokerEvents.movedByTask;
  readonly retentionExpired = ignoredBrokerEvents.retentionExpired;
  readonly leaseExpired = ignoredBrokerEvents.leaseExpired;
  readonly leaseExtended = ignoredBrokerEvents.leaseExtended;
  readonly leaseReleased = ignoredBrokerEvents.leaseReleased;
  readonly pushed = ignoredBrokerEvents.pushed;
  readonly streamAcked = ignoredBrokerEvents.streamAcked;
  readonly creditFilled = ignoredBrokerEvents.creditFilled;

  /** Takes one sample of every queue at `now`; queues gone since are forgotten. */
  sample(now: number): void {
    if (this.source === undefined) return;
    const slot = this.head;
    const sampleNumber = ++this.samplesTaken;
    const previousSampleAt = this.lastSampleAt;
    this.times[slot] = now;
    for (const queue of this.source.allQueues()) {
      let track = this.tracks.get(queue.name);
      // Deleted and made again since the last sample: its events since were counted with the old queue's.
      const remade = track?.createTime !== undefined && track.createTime !== queue.createTime;
      if (track === undefined || remade) this.tracks.set(queue.name, (track = new QueueTrack(this.shape.samples)));
      if (track.createTime === undefined) {
        // What a queue first seen counted is its own since it was made (or since the last sample, the
        // earliest this broker can have served it), unless the history has only begun or the queue was remade.
        const keepsCounts = previousSampleAt !== undefined && !remade;
        const countedSince = keepsCounts ? Math.min(now, Math.max(queue.createTime, previousSampleAt)) : now;
        track.begin(queue.createTime, countedSince, keepsCounts);
      }
      track.record(slot, sampleNumber, queue);
      track.rollSpan(now);
    }
    // Deleting while iterating a Map is safe; this drops queues gone, and any only heard of in events.
    for (const [name, track] of this.tracks) if (track.sampledIn !== sampleNumber) this.tracks.delete(name);
    this.head = (slot + 1) % this.shape.samples;
    this.lastSampleAt = now;
  }

  /** The queue's series, or undefined when this broker has no samples of it. */
  series(queue: string): QueueSeriesView | undefined {
    return this.latestSeries(queue, 0);
  }

  /** The queue's latest `samples` samples (all kept if 0), the end of its series; undefined when it has none. */
  latestSeries(queue: string, samples: number): QueueSeriesView | undefined {
    const track = this.sampled(queue);
    if (track === undefined) return undefined;
    const from = samples === 0 ? 0 : Math.max(0, track.samples - samples);
    const slots = Array.from({ length: track.samples - from }, (_, index) => this.slotOf(track, from + index));
    const column = (name: keyof typeof countColumns) => slots.map((slot) => track.count(countColumns[name], slot));
    return {
      t: slots.map((slot) => this.times[slot]!),
      visible: column("visible"),
      inFlight: column("inFlight"),
      delayed: column("delayed"),
      oldestAgeMs: slots.map((slot) => {
        const age = track.ages[slot]!;
        return Number.isNaN(age) ? null : age;
      }),
      sent: this.rates(track, "sent", from),
      received: this.rates(track, "received", from),
      deleted: this.rates(track, "deleted", from),
      deadLettered: this.rates(track, "deadLettered", from),
      arrived: this.rates(track, "arrived", from),
    };
  }

  /** The names of the queues sampled, in no order. */
  sampledQueues(): string[] {
    return [...this.tracks].filter(([, track]) => track.samples > 0).map(([name]) => name);
  }

  /** Whether the queue sent messages to its dead-letter queue within the recent samples; undefined when it has no samples. */
  isDeadLettering(queue: string): boolean | undefined {
    const track = this.sampled(queue);
    if (track === undefined) return undefined;
    // The oldest sample's count is over a sample no longer kept (or none): it is left out, as its rate is.
    for (let index = Math.max(1, track.samples - deadLetteringSamples); index < track.samples; index++) {
      if (track.count(countColumns.deadLettered, this.slotOf(track, index)) > 0) return true;
    }
    return false;
  }

  /**
   * Whether the oldest message's age kept rising with the clock over the
   * samples of at least the last minute and is past a minute: nobody is
   * taking the front of the queue. Undefined when the queue has no samples;
   * false while it has fewer than a minute's (always, if the ring is shorter).
   */
  isOldestAgeGrowing(queue: string): boolean | undefined {
    const track = this.sampled(queue);
    if (track === undefined) return undefined;
    if (track.samples < this.growingSamples) return false;
    const first = track.samples - this.growingSamples;
    const ageAt = (index: number) => track.ages[this.slotOf(track, index)]!;
    for (let index = first + 1; index < track.samples; index++) {
      // NaN (no message) fails this too.
      if (!(ageAt(index) >= ageAt(index - 1))) return false;
    }
    const last = track.samples - 1;
    const elapsed = this.times[this.slotOf(track, last)]! - this.times[this.slotOf(track, first)]!;
    return (
      elapsed >= growingForMs && ageAt(last) >= growingFloorMs && ageAt(last) - ageAt(first) >= growingShare * elapsed
    );
  }

  /**
   * p50 and p99 of processing time since the start of the previous span (one
   * to two spans; a new queue's since it was made), interpolated in the
   * broker histogram's buckets. Undefined when the queue has no samples.
   */
  processing(queue: string, now: number): ProcessingView | undefined {
    const track = this.sampled(queue);
    if (track === undefined) return undefined;
    const counts = track.processingCounts();
    const quantile = (q: number): number | null => {
      const seconds = histogramQuantile(q, { bounds: bucketBounds, counts });
      return seconds === undefined ? null : seconds * 1000;
    };
    const since = Number.isNaN(track.previousSpanStart) ? track.spanStart : track.previousSpanStart;
    return { p50Ms: quantile(0.5), p99Ms: quantile(0.99), count: counts[bucketCount - 1]!, windowMs: now - since };
  }

  /** The queue's track, made at its first event or sample; dropped at the next sample if the broker has no such queue. */
  private track(queue: string): QueueTrack {
    let track = this.tracks.get(queue);
    if (track === undefined) this.tracks.set(queue, (track = new QueueTrack(this.shape.samples)));
    return track;
  }

  private sampled(queue: string): QueueTrack | undefined {
    const track = this.tracks.get(queue);
    return track === undefined || track.samples === 0 ? undefined : track;
  }

  /** The slot of the queue's index-th sample, oldest first. */
  private slotOf(track: QueueTrack, index: number): number {
    const slots = this.shape.samples;
    return (this.head - track.samples + index + slots) % slots;
  }

  /**
   * Messages a second between each of the queue's samples from the `from`-th
   * on and the sample before; 0 for its oldest, which has none. A plain loop:
   * the queue list asks this of every queue.
   */
  private rates(track: QueueTrack, rate: RateName, from: number): number[] {
    const slots = this.shape.samples;
    const rates: number[] = [];
    let slot = this.slotOf(track, from);
    for (let index = from; index < track.samples; index++) {
      const before = slot === 0 ? slots - 1 : slot - 1;
      const seconds = (this.times[slot]! - this.times[before]!) / 1000;
      rates.push(index > 0 && seconds > 0 ? track.count(countColumns[rate], slot) / seconds : 0);
      slot = slot + 1 === slots ? 0 : slot + 1;
    }
    return rates;
  }
}
