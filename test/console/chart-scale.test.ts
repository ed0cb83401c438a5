// The console's chart scales and rate windows, as plain functions: the time
// axis's round ticks, the value axis's top, the nearest sample, and the rate
// figure that is its window's average.
import { describe, expect, it } from "vitest";
import { nearestIndex, niceMax, timeTicks } from "../../console/src/chart-scale.js";
import { formatAgo, formatWindow } from "../../console/src/format.js";
import { averageRate, latest, samplesIn } from "../../console/src/rate-window.js";

const minute = 60_000;

describe("a chart's time axis", () => {
  it("puts several ticks on round times: ten minutes of samples get a tick every two minutes", () => {
    const from = Date.UTC(2026, 0, 1, 10, 0, 7);
    const { ticks, stepMs } = timeTicks(from, from + 10 * minute);
    expect(stepMs).toBe(2 * minute);
    expect(ticks.map((t) => new Date(t).toISOString().slice(11, 19))).toEqual([
      "10:02:00",
      "10:04:00",
      "10:06:00",
      "10:08:00",
      "10:10:00",
    ]);
  });

  it("labels a span of seconds in seconds, with at least three ticks", () => {
    const from = Date.UTC(2026, 0, 1, 10, 0, 1);
    const { ticks, stepMs } = timeTicks(from, from + 20_000);
    expect(stepMs).toBe(5_000);
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks.every((t) => t % 5_000 === 0 && t >= from && t <= from + 20_000)).toBe(true);
  });
});

describe("a chart's value axis", () => {
  it("reaches a round number at or above the peak, whose half is round too", () => {
    expect([0, 0.3, 1, 3, 7, 12, 4_500].map(niceMax)).toEqual([1, 0.4, 1, 4, 8, 20, 6_000]);
  });
});

describe("the sample under the pointer", () => {
  it("is the one nearest in time", () => {
    expect([0, 4, 6, 100, 999].map((t) => nearestIndex([0, 10, 20, 1000], t))).toEqual([0, 0, 1, 2, 3]);
  });
});

describe("a rate figure", () => {
  it("is the mean of the samples its sparkline or chart draws, over the window they cover", () => {
    // 20 messages in 60 one-second samples: 1/3 a second.
    const series = Array.from({ length: 60 }, (_, i) => (i >= 10 && i < 15 ? 4 : 0));
    expect(averageRate(series)).toBeCloseTo(20 / 60);
    expect(averageRate([])).toBe(0);
    expect(samplesIn(5 * minute, 10_000)).toBe(30);
    expect(latest([1, 2, 3, 4], 2)).toEqual([3, 4]);
    expect(latest([1, 2], 5)).toEqual([1, 2]);
  });

  it("names its window in words", () => {
    expect([10_000, 90_000, 5 * minute, 60 * minute].map((ms) => formatWindow(ms))).toEqual([
      "10 s",
      "90 s",
      "5 min",
      "1 h",
    ]);
  });

  it("names a row's jittered window in whole sample intervals, as the heading's", () => {
    // 30 samples whose times jittered by 130 ms: the heading's 5 min, not "300 s".
    expect(formatWindow(5 * minute - 130, 10_000)).toBe("5 min");
    expect(formatWindow(95_200, 10_000)).toBe("100 s");
  });
});

describe("a heartbeat's age", () => {
  it("says how long ago, and 'just now' for a clock a little ahead", () => {
    const now = 1_000_000;
    expect([now + 500, now - 400, now - 12_300, now - 252_000].map((t) => formatAgo(t, now))).toEqual([
      "just now",
      "just now",
      "12 s ago",
      "4m 12s ago",
    ]);
  });
});
