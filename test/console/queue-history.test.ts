import { describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import type { QueueInfo } from "../../src/broker/types.js";
import { histogramQuantile } from "../../src/console/histogram-quantile.js";
import { QueueHistory } from "../../src/console/queue-history.js";
import { createHoldshelfMetrics } from "../../src/metrics/holdshelf-metrics.js";

/** A queue as the broker reports it, with the counts a test sets. */
function queueInfo(name: string, counts: { visible?: number; inFlight?: number; oldestAgeMs?: number } = {}): QueueInfo {
  return {
    name,
    config: defaultQueueConfig,
    counts: { visible: counts.visible ?? 0, inFlight: counts.inFlight ?? 0, delayed: 0, oldestSendTime: undefined },
    deadLetterSourceQueues: [],
    oldestMessageAgeMs: counts.oldestAgeMs,
    createTime: 0,
    updateTime: 0,
  };
}

/** A history over real broker metrics, and the queues the broker "has", which a test changes between samples. */
function historyOf(samples = 60) {
  const metrics = createHoldshelfMetrics();
  let queues: QueueInfo[] = [];
  const history = new QueueHistory({ allQueues: () => queues, registry: metrics.registry }, { sampleIntervalMs: 10_000, samples });
  return { history, events: metrics.broker, setQueues: (next: QueueInfo[]) => (queues = next) };
}

describe("the console's queue history", () => {
  it("turns the broker's counters into rates per second between samples, and keeps counts as they were", async () => {
    const { history, events, setQueues } = historyOf();
    setQueues([queueInfo("jobs", { visible: 0 })]);
    await history.sample(0);
    events.sent("jobs", 50);
    for (let i = 0; i < 20; i++) events.delivered("jobs", 1, 5);
    setQueues([queueInfo("jobs", { visible: 30, inFlight: 20 })]);
    await history.sample(10_000);
    events.sent("jobs", 10);
    setQueues([queueInfo("jobs", { visible: 40, inFlight: 20 })]);
    await history.sample(20_000);
    const series = history.series("jobs")!;
    expect(series.t).toEqual([0, 10_000, 20_000]);
    expect(series.sent).toEqual([0, 5, 1]);
    expect(series.received).toEqual([0, 2, 0]);
    expect(series.visible).toEqual([0, 30, 40]);
    expect(series.inFlight).toEqual([0, 20, 20]);
    expect(history.series("other")).toBeUndefined();
  });

  it("keeps only the newest samples, and forgets a queue the broker no longer has", async () => {
    const { history, setQueues } = historyOf(3);
    setQueues([queueInfo("a"), queueInfo("b")]);
    for (let t = 0; t < 5; t++) await history.sample(t * 10_000);
    expect(history.series("a")!.t).toEqual([20_000, 30_000, 40_000]);
    setQueues([queueInfo("a")]);
    await history.sample(50_000);
    expect(history.series("b")).toBeUndefined();
  });

  it("marks a queue dead-lettering while its dead-letter counter rose within the recent samples", async () => {
    const { history, events, setQueues } = historyOf();
    setQueues([queueInfo("work"), queueInfo("work-dlq")]);
    await history.sample(0);
    expect(history.isDeadLettering("work")).toBe(false);
    events.deadLettered("work", "work-dlq", 2);
    await history.sample(10_000);
    expect(history.isDeadLettering("work")).toBe(true);
    expect(history.isDeadLettering("work-dlq")).toBe(false);
    expect(history.series("work")!.deadLettered).toEqual([0, 0.2]);
    // Thirty quiet samples later (five minutes), the mark is gone.
    for (let i = 2; i <= 32; i++) await history.sample(i * 10_000);
    expect(history.isDeadLettering("work")).toBe(false);
  });

  it("marks the oldest message's age as growing only when it keeps up with the clock past a minute", async () => {
    const { history, setQueues } = historyOf();
    // Consumers keep up: the oldest message changes and its age stays small.
    for (let i = 0; i < 6; i++) {
      setQueues([queueInfo("fast", { visible: 3, oldestAgeMs: 2_000 + (i % 2) * 500 }), queueInfo("stuck", { visible: 3, oldestAgeMs: 30_000 + i * 10_000 })]);
      await history.sample(i * 10_000);
    }
    expect(history.isOldestAgeGrowing("fast")).toBe(false);
    // 30 s to 80 s: growing with the clock, and past a minute.
    expect(history.isOldestAgeGrowing("stuck")).toBe(true);
    setQueues([queueInfo("stuck", { visible: 2, oldestAgeMs: 5_000 })]);
    await history.sample(60_000);
    expect(history.isOldestAgeGrowing("stuck")).toBe(false);
  });

  it("reports processing-time quantiles from the histogram, over the spans since the previous one began", async () => {
    const { history, events, setQueues } = historyOf();
    setQueues([queueInfo("jobs")]);
    // Before any sample the window is everything so far.
    for (let i = 0; i < 100; i++) events.deleted("jobs", 200);
    const early = await history.processing("jobs", 0);
    expect(early.count).toBe(100);
    // 200 ms sits in the (0.1 s, 0.25 s] bucket.
    expect(early.p50Ms!).toBeGreaterThan(100);
    expect(early.p50Ms!).toBeLessThanOrEqual(250);
    await history.sample(0);
    for (let i = 0; i < 50; i++) events.deleted("jobs", 200);
    expect((await history.processing("jobs", 60_000)).count).toBe(50);
    // Ten minutes on, two spans have begun: the window starts at the second, and the old deletes fall out of it.
    await history.sample(5 * 60_000);
    for (let i = 0; i < 10; i++) events.deleted("jobs", 20_000);
    await history.sample(10 * 60_000);
    const later = await history.processing("jobs", 10 * 60_000);
    expect(later.count).toBe(10);
    expect(later.windowMs).toBe(5 * 60_000);
    expect(later.p99Ms!).toBeGreaterThan(10_000);
    expect(later.p99Ms!).toBeLessThanOrEqual(30_000);
    expect(await history.processing("none", 0)).toEqual({ p50Ms: null, p99Ms: null, count: 0, windowMs: 0 });
    // A queue the history has not sampled yet counts from the first sample.
    expect((await history.processing("none", 12 * 60_000)).windowMs).toBe(12 * 60_000);
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
