/** A histogram's cumulative bucket counts by upper bound, ascending, the last bound +Infinity (Prometheus' form). */
export interface BucketCounts {
  readonly bounds: readonly number[];
  readonly counts: readonly number[];
}

/**
 * The q-quantile (0..1) of a histogram, interpolated linearly inside the
 * bucket it falls in, as Prometheus' histogram_quantile does: a value in the
 * +Inf bucket is reported as the largest finite bound. Undefined without
 * observations.
 */
export function histogramQuantile(q: number, { bounds, counts }: BucketCounts): number | undefined {
  const total = counts[counts.length - 1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let bucket = counts.findIndex((count) => count >= rank);
  if (bucket === -1) bucket = counts.length - 1;
  const upper = bounds[bucket]!;
  if (upper === Infinity) return bounds.length > 1 ? bounds[bounds.length - 2] : undefined;
  const lower = bucket === 0 ? 0 : bounds[bucket - 1]!;
  const below = bucket === 0 ? 0 : counts[bucket - 1]!;
  const inBucket = counts[bucket]! - below;
  return inBucket === 0 ? upper : lower + (upper - lower) * ((rank - below) / inBucket);
}
