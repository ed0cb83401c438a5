import { describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import type { QueueInfo } from "../../src/broker/types.js";
import { histogramQuantile } from "../../src/console/histogram-quantile.js";
import { QueueHistory } from "../../src/console/queue-history.js";

/** A queue as the broker reports it, with the counts (and the creation time) a test sets. */
function queueInfo(
  name: string,
  counts: { visible?: number; inFlight?: number; oldestAgeMs?: number; createTime?: number } = {},
): QueueInfo {
  return {
    name,
    config: defaultQueueConfig,
    counts: { visible: counts.visible ?? 0, inFlight: counts.inFlight ?? 0, delayed: 0, oldestSendTime: undefined },
    deadLetterSourceQueues: [],
    oldestMessageAgeMs: counts.oldestAgeMs,
    createTime: counts.createTime ?? 0,
    updateTime: 0,
  };
}

/** A history fed by its own event methods, and the queues the broker "has", which a test changes between samples. */
function historyOf(shape: { samples?: number; sampleIntervalMs?: number } = {}) {
  let queues: QueueInfo[] = [];
  const history = new QueueHistory({
    sampleIntervalMs: shape.sampleIntervalMs ?? 10_000,
    samples: shape.samples ?? 60,
  });
  history.observe({ allQueues: () => queues });
  return { history, setQueues: (next: QueueInfo[]) => (queues = next) };
}

describe("the console's queue history", () => {
  it("turns the broker's events into rates per second between samples, and keeps counts as they were", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("jobs", { visible: 0 })]);
    history.sample(0);
    history.sent("jobs", 50);
    for (let i = 0; i < 20; i++) history.delivered("jobs");
    setQueues([queueInfo("jobs", { visible: 30, inFlight: 20 })]);
    history.sample(10_000);
    history.sent("jobs", 10);
    setQueues([queueInfo("jobs", { visible: 40, inFlight: 20 })]);
    history.sample(20_000);
    const series = history.series("jobs")!;
    expect(series.t).toEqual([0, 10_000, 20_000]);
    expect(series.sent).toEqual([0, 5, 1]);
    expect(series.received).toEqual([0, 2, 0]);
    expect(series.visible).toEqual([0, 30, 40]);
    expect(series.inFlight).toEqual([0, 20, 20]);
    expect(series.oldestAgeMs).toEqual([null, null, null]);
    const latest = history.latestSeries("jobs", 2)!;
    expect(latest.t).toEqual([10_000, 20_000]);
    expect(latest.sent).toEqual([5, 1]);
    expect(latest.received).toEqual([2, 0]);
    expect(history.latestSeries("jobs", 0)!.t).toEqual([0, 10_000, 20_000]);
    expect(history.series("other")).toBeUndefined();
    expect(history.latestSeries("other", 30)).toBeUndefined();
  });

  it("counts arrivals from other queues apart from sends, and lists the queues sampled", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("dlq"), queueInfo("jobs")]);
    history.sample(0);
    history.arrived("dlq", 4);
    history.deadLettered("jobs", "dlq", 4);
    history.sent("jobs", 2);
    history.sample(10_000);
    expect(history.series("dlq")).toMatchObject({ sent: [0, 0], arrived: [0, 0.4] });
    expect(history.series("jobs")).toMatchObject({ sent: [0, 0.2], deadLettered: [0, 0.4], arrived: [0, 0] });
    expect(history.sampledQueues().sort()).toEqual(["dlq", "jobs"]);
  });

  it("keeps only the newest samples, and forgets a queue the broker no longer has", () => {
    const { history, setQueues } = historyOf({ samples: 3 });
    setQueues([queueInfo("a"), queueInfo("b")]);
    for (let t = 0; t < 5; t++) {
      history.sent("a", t);
      history.sample(t * 10_000);
    }
    expect(history.series("a")!.t).toEqual([20_000, 30_000, 40_000]);
    // The oldest kept sample has no sample before it: no rate, as for a first sample.
    expect(history.series("a")!.sent).toEqual([0, 0.3, 0.4]);
    setQueues([queueInfo("a")]);
    history.sample(50_000);
    expect(history.series("b")).toBeUndefined();
    expect(history.series("a")!.t).toEqual([30_000, 40_000, 50_000]);
  });

  it("starts a new ring for a queue deleted and made again between samples", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("jobs", { createTime: 0 })]);
    history.sample(0);
    history.sent("jobs", 10);
    history.sample(10_000);
    expect(history.series("jobs")!.sent).toEqual([0, 1]);
    // The old queue dead-letters and counts deletes, then is deleted; a new "jobs" is made at 15 s.
    history.deadLettered("jobs", "jobs-dlq", 3);
    history.deleted("jobs", 200);
    setQueues([queueInfo("jobs", { createTime: 15_000, visible: 1 })]);
    history.sample(20_000);
    expect(history.series("jobs")).toMatchObject({ t: [20_000], sent: [0], visible: [1] });
    expect(history.isDeadLettering("jobs")).toBe(false);
    // Its events since it was made were counted with the old queue's: its window starts at this sample.
    expect(history.processing("jobs", 30_000)).toEqual({ p50Ms: null, p99Ms: null, count: 0, windowMs: 10_000 });
  });

  it("marks a queue dead-lettering while it dead-lettered within the recent samples", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("work"), queueInfo("work-dlq")]);
    expect(history.isDeadLettering("work")).toBeUndefined();
    history.sample(0);
    expect(history.isDeadLettering("work")).toBe(false);
    history.deadLettered("work", "work-dlq", 2);
    history.sample(10_000);
    expect(history.isDeadLettering("work")).toBe(true);
    expect(history.isDeadLettering("work-dlq")).toBe(false);
    expect(history.series("work")!.deadLettered).toEqual([0, 0.2]);
    // Thirty quiet samples later (five minutes), the mark is gone.
    for (let i = 2; i <= 30; i++) history.sample(i * 10_000);
    expect(history.isDeadLettering("work")).toBe(true);
    history.sample(31 * 10_000);
    expect(history.isDeadLettering("work")).toBe(false);
    // A queue this broker has not sampled (served elsewhere, or made since) is neither.
    expect(history.isDeadLettering("elsewhere")).toBeUndefined();
  });

  it("marks the oldest message's age as growing only when it keeps up with the clock for a minute and is past a minute", () => {
    const { history, setQueues } = historyOf();
    // Consumers keep up: the oldest message changes and its age stays small.
    const sampleAt = (i: number) => {
      setQueues([
        queueInfo("fast", { visible: 3, oldestAgeMs: 2_000 + (i % 2) * 500 }),
        queueInfo("stuck", { visible: 3, oldestAgeMs: 30_000 + i * 10_000 }),
        queueInfo("empty"),
      ]);
      history.sample(i * 10_000);
    };
    for (let i = 0; i < 6; i++) sampleAt(i);
    // 30 s to 80 s over 50 s: past a minute, but not yet growing for a minute.
    expect(history.isOldestAgeGrowing("stuck")).toBe(false);
    sampleAt(6);
    // 30 s to 90 s over 60 s: growing with the clock for a minute, and past a minute.
    expect(history.isOldestAgeGrowing("stuck")).toBe(true);
    expect(history.isOldestAgeGrowing("fast")).toBe(false);
    expect(history.isOldestAgeGrowing("empty")).toBe(false);
    expect(history.isOldestAgeGrowing("elsewhere")).toBeUndefined();
    setQueues([queueInfo("stuck", { visible: 2, oldestAgeMs: 5_000 })]);
    history.sample(70_000);
    expect(history.isOldestAgeGrowing("stuck")).toBe(false);
  });

  it("takes as many samples as span a minute at the history's interval, and never marks growth a shorter ring cannot show", () => {
    const slow = historyOf({ sampleIntervalMs: 20_000 });
    const short = historyOf({ samples: 3 });
    for (let i = 0; i < 4; i++) {
      for (const { history, setQueues } of [slow, short]) {
        setQueues([queueInfo("stuck", { oldestAgeMs: 60_000 + i * 20_000 })]);
        history.sample(i * 20_000);
      }
      // At 20 s a minute is four samples: 0, 20, 40 and 60 s.
      expect(slow.history.isOldestAgeGrowing("stuck")).toBe(i === 3);
    }
    expect(short.history.isOldestAgeGrowing("stuck")).toBe(false);
  });

  it("reports processing-time quantiles over the spans since the previous one began", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("jobs")]);
    for (let i = 0; i < 100; i++) history.deleted("jobs", 200);
    // Not sampled yet: no window to report, rather than a misleading empty one.
    expect(history.processing("jobs", 0)).toBeUndefined();
    history.sample(0);
    // The window begins at the history's first sample: what came before is not in it.
    expect(history.processing("jobs", 0)).toEqual({ p50Ms: null, p99Ms: null, count: 0, windowMs: 0 });
    for (let i = 0; i < 50; i++) history.deleted("jobs", 200);
    const early = history.processing("jobs", 60_000)!;
    expect(early.count).toBe(50);
    expect(early.windowMs).toBe(60_000);
    // 200 ms sits in the (0.1 s, 0.25 s] bucket.
    expect(early.p50Ms!).toBeGreaterThan(100);
    expect(early.p50Ms!).toBeLessThanOrEqual(250);
    // Ten minutes on, two spans have begun: the window starts at the second, and the old deletes fall out of it.
    history.sample(5 * 60_000);
    for (let i = 0; i < 10; i++) history.deleted("jobs", 20_000);
    history.sample(10 * 60_000);
    const later = history.processing("jobs", 10 * 60_000)!;
    expect(later.count).toBe(10);
    expect(later.windowMs).toBe(5 * 60_000);
    expect(later.p99Ms!).toBeGreaterThan(10_000);
    expect(later.p99Ms!).toBeLessThanOrEqual(30_000);
    expect(history.processing("none", 10 * 60_000)).toBeUndefined();
  });

  it("starts the processing window of a queue made since the history began at its creation, with what it counted before its first sample", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("old")]);
    history.sample(0);
    history.sample(10_000);
    // Made at 14 s; it deletes messages before the sample at 20 s first sees it.
    for (let i = 0; i < 5; i++) history.deleted("fresh", 40);
    expect(history.processing("fresh", 18_000)).toBeUndefined();
    setQueues([queueInfo("old"), queueInfo("fresh", { createTime: 14_000 })]);
    history.sample(20_000);
    expect(history.processing("fresh", 30_000)).toMatchObject({ count: 5, windowMs: 16_000 });
    // Its first sample has no rate: there is no sample before it.
    expect(history.series("fresh")!.deleted).toEqual([0]);
  });

  it("forgets, at the next sample, what it heard of a queue the broker does not have", () => {
    const { history, setQueues } = historyOf();
    setQueues([queueInfo("jobs")]);
    history.sample(0);
    history.deleted("ghost", 200);
    history.sample(10_000);
    setQueues([queueInfo("jobs"), queueInfo("ghost", { createTime: 15_000 })]);
    history.sample(20_000);
    expect(history.processing("ghost", 20_000)).toMatchObject({ count: 0 });
  });
});

describe("histogramQuantile", () => {
  const buckets = { bounds: [1, 2, 4, Infinity], counts: [10, 30, 40, 40] };
  it("interpolates inside the bucket the rank falls in, as Prometheus does", () => {
    expect(histogramQuantile(0.25, buckets)).toBe(1); // rank 10: the top of the first bucket
    expect(histogramQuantile(0.5, buckets)).toBe(1.5); // rank 20: halfway through (1, 2]
    expect(histogramQuantile(0.875, buckets)).toBe(3); // rank 35: halfway through (2, 4]
  });
  it("answers the largest finite bound for the +Inf bucket, and nothing without observations", () => {
    expect(histogramQuantile(0.99, { bounds: [1, Infinity], counts: [1, 10] })).toBe(1);
    expect(histogramQuantile(0.5, { bounds: [1, Infinity], counts: [0, 0] })).toBeUndefined();
    expect(histogramQuantile(0.5, { bounds: [], counts: [] })).toBeUndefined();
  });
});
