// A rate figure and the chart beside it must agree: both are read from the
// same samples, each the average rate over one sample interval, so the
// figure is their mean and its label names the span they cover.

/** The mean of a rate series (0 for none): the average over the window, as every point covers one equal interval. */
export function averageRate(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** How many of the latest samples a window of `windowMs` holds (at least one). */
export function samplesIn(windowMs: number, sampleIntervalMs: number): number {
  return Math.max(1, Math.round(windowMs / sampleIntervalMs));
}

/** The latest `count` entries of a series. */
export function latest<T>(values: readonly T[], count: number): readonly T[] {
  return values.slice(Math.max(0, values.length - count));
}
