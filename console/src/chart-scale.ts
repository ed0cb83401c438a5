// The scales of the console's line charts: where the time axis puts its
// labelled ticks, how high the value axis reaches, and which sample a
// pointer is nearest.

// Tick spacings a time axis may use, so that its labels fall on round times of day.
const tickSteps = [
  1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000,
  7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

/** A time axis's ticks between `from` and `to`: round times, at most `most` of them, and the step between them. */
export function timeTicks(from: number, to: number, most = 6): { readonly ticks: number[]; readonly stepMs: number } {
  const span = Math.max(1, to - from);
  const stepMs = tickSteps.find((step) => span / step <= most) ?? tickSteps[tickSteps.length - 1]!;
  const ticks: number[] = [];
  for (let tick = Math.ceil(from / stepMs) * stepMs; tick <= to; tick += stepMs) ticks.push(tick);
  return { ticks, stepMs };
}

/** The top of a value axis: the series' peak rounded up to 1, 2, 4, 6 or 8 times a power of ten (1 when all are 0), so its half is round too. */
export function niceMax(peak: number): number {
  if (!(peak > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(peak));
  const nice = [1, 2, 4, 6, 8, 10].find((factor) => peak <= factor * power)!;
  return nice * power;
}

/** The index of the time in `times` (ascending) nearest to `t`. */
export function nearestIndex(times: readonly number[], t: number): number {
  let best = 0;
  for (let i = 1; i < times.length; i++) {
    if (Math.abs(times[i]! - t) < Math.abs(times[best]! - t)) best = i;
  }
  return best;
}
