// The console API's JSON forms of ListQueueActivity's answers: the series a
// queue's charts draw, a list row's sparklines with the average over the
// same window, and the cluster's total rates for the overview.
import type { QueueActivity } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { durationMs } from "./console-views.js";

/** The rates the console shows, by their names in its API. */
const rateFields = {
  sent: "sentPerSecond",
  received: "receivedPerSecond",
  deleted: "deletedPerSecond",
  deadLettered: "deadLetteredPerSecond",
  arrived: "arrivedPerSecond",
} as const satisfies Record<string, keyof QueueActivity>;
type RateName = keyof typeof rateFields;
const rateNames = Object.keys(rateFields) as RateName[];

/** Per-second rates by name, one value per point. */
export type RateSeries = Record<RateName, number[]>;

/** A queue's whole recorded series, oldest first, as GET /api/queues/<name> answers it. */
export interface ActivitySeriesView extends Record<RateName, (number | null)[]> {
  readonly t: number[];
  readonly visible: number[];
  readonly inFlight: number[];
  readonly delayed: number[];
  readonly oldestAgeMs: (number | null)[];
}

/** The depth of the queue now: the same answer the page's "Now" boxes show. */
export interface CurrentCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldestMessageAgeMs: number | null;
}

/**
 * The queue's series with `now` appended as the latest point: the depth
 * chart ends where the "Now" boxes are, not up to a sample interval behind.
 * That point's rates are null: no interval has ended there yet.
 */
export function activitySeries(
  activity: QueueActivity | undefined,
  now: number,
  current: CurrentCounts,
): ActivitySeriesView {
  const numbers = (values: readonly bigint[] | undefined): number[] => (values ?? []).map(Number);
  const rates = Object.fromEntries(
    rateNames.map((name) => [name, [...(activity?.[rateFields[name]] ?? []), null]]),
  ) as Record<RateName, (number | null)[]>;
  const times = numbers(activity?.sampleTimeMs);
  // Under clock skew the owner's latest sample can be later than this
  // broker's now: the appended point never goes back in time.
  return {
    t: [...times, Math.max(now, times[times.length - 1] ?? now)],
    visible: [...numbers(activity?.visible), current.visible],
    inFlight: [...numbers(activity?.inFlight), current.inFlight],
    delayed: [...numbers(activity?.delayed), current.delayed],
    oldestAgeMs: [
      ...(activity?.oldestMessageAgeMs ?? []).map((age) => (age < 0n ? null : Number(age))),
      current.oldestMessageAgeMs,
    ],
    ...rates,
  };
}

/** A list row's sparklines and the one figure per rate, both over the same window. */
export interface RowRatesView {
  /** Each point's time and per-second rates, each over the sample interval that ends at it. */
  readonly rates: RateSeries & { readonly t: number[] };
  /** Each rate's average over exactly the intervals the sparkline's points cover: the events counted over `rateWindowMs`. */
  readonly averageRates: Record<RateName, number>;
  readonly rateWindowMs: number;
}

/**
 * A row's rates from activity asked with one sample more than the row
 * shows: that first sample only starts the window (its own rate is over the
 * interval before it), so every point shown covers a whole interval inside
 * the window, and each average is the events counted in it over its length.
 */
export function rowRates(activity: QueueActivity | undefined): RowRatesView {
  const times = (activity?.sampleTimeMs ?? []).map(Number);
  const rates = Object.fromEntries(
    rateNames.map((name) => [name, (activity?.[rateFields[name]] ?? []).slice(1)]),
  ) as RateSeries;
  const windowMs = times.length < 2 ? 0 : times[times.length - 1]! - times[0]!;
  const averageRates = Object.fromEntries(
    rateNames.map((name) => {
      let events = 0;
      for (let index = 1; index < times.length; index++)
        events += (rates[name][index - 1]! * (times[index]! - times[index - 1]!)) / 1000;
      return [name, windowMs > 0 ? events / (windowMs / 1000) : 0];
    }),
  ) as Record<RateName, number>;
  return { rates: { t: times.slice(1), ...rates }, averageRates, rateWindowMs: windowMs };
}

/**
 * The rates of many queues added up, point by point: each queue's points
 * are put on the sample interval's grid (brokers sample at their own
 * moments), its first point left out as rowRates does, and the latest
 * `points` grid points kept. Slots later than the earliest of the queues'
 * newest slots are dropped: one broker's newest sample can round to a slot
 * another broker has not sampled yet, and that slot would show only part
 * of the total.
 */
export function totalRates(
  activities: readonly QueueActivity[],
  points: number,
): RateSeries & { readonly t: number[] } {
  const sums = new Map<number, Record<RateName, number>>();
  let complete = Number.POSITIVE_INFINITY;
  for (const activity of activities) {
    const intervalMs = activity.sampleInterval === undefined ? 0 : durationMs(activity.sampleInterval);
    if (intervalMs <= 0) continue;
    activity.sampleTimeMs.forEach((time, index) => {
      if (index === 0) return;
      const slot = Math.round(Number(time) / intervalMs) * intervalMs;
      const sum = sums.get(slot) ?? { sent: 0, received: 0, deleted: 0, deadLettered: 0, arrived: 0 };
      for (const name of rateNames) sum[name] += activity[rateFields[name]][index] ?? 0;
      sums.set(slot, sum);
      if (index === activity.sampleTimeMs.length - 1) complete = Math.min(complete, slot);
    });
  }
  const slots = [...sums.keys()]
    .filter((slot) => slot <= complete)
    .sort((a, b) => a - b)
    .slice(-points);
  const series = Object.fromEntries(
    rateNames.map((name) => [name, slots.map((slot) => sums.get(slot)![name])]),
  ) as RateSeries;
  return { t: slots, ...series };
}
