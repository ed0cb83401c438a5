// The benchmarks read the broker's own metrics with the parser the tests use.
import { parseExposition, samplesOf, sampleValue, type Sample } from "../test/support/prometheus-text.js";

/** The group-commit totals a broker has written so far. */
export interface CommitCounters {
  /** Batches written: one fsync each in fsync durability. */
  readonly batches: number;
  /** Commit calls those batches carried. */
  readonly commits: number;
}

/** Cumulative bucket counts of a histogram, by upper bound in seconds (Infinity last). */
export type Buckets = { readonly le: number; readonly count: number }[];

/** Every sample of a broker's /metrics. */
export async function scrapeBroker(metricsAddress: string): Promise<Sample[]> {
  return parseExposition(await (await fetch(`http://${metricsAddress}/metrics`)).text());
}

/** The value of an unlabelled metric; throws if the broker does not export it. */
export function requireValue(samples: readonly Sample[], name: string): number {
  const value = sampleValue(samples, name);
  if (value === undefined) throw new Error(`no ${name} in the broker's metrics`);
  return value;
}

/** Reads the group-commit totals from a broker's /metrics. */
export async function readCommitCounters(metricsAddress: string): Promise<CommitCounters> {
  const samples = await scrapeBroker(metricsAddress);
  return {
    batches: requireValue(samples, "holdshelf_storage_commit_seconds_count"),
    commits: requireValue(samples, "holdshelf_storage_commit_batch_size_sum"),
  };
}

/** A histogram's buckets, summed over any labels but `le`; throws if the broker does not export it. */
export function histogramBuckets(samples: readonly Sample[], name: string): Buckets {
  const counts = new Map<number, number>();
  for (const { labels, value } of samplesOf(samples, `${name}_bucket`)) {
    const bound = labels.le === "+Inf" ? Infinity : Number(labels.le);
    counts.set(bound, (counts.get(bound) ?? 0) + value);
  }
  if (counts.size === 0) throw new Error(`no ${name} in the broker's metrics`);
  return [...counts].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}
