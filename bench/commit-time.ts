/**
 * How long brokers' group commits took, read from their /metrics around a
 * window: the PostgreSQL scenarios (11, 12) report it because on PostgreSQL a
 * broker's rate is bound by its commit latency rather than its CPU.
 */
import { requireValue, scrapeBroker } from "./broker-scrape.js";
import type { BrokerChild } from "./broker-child.js";

/** Brokers' time spent writing group-commit batches so far, and the batches, summed over `writers` brokers. */
export interface CommitTime {
  readonly seconds: number;
  readonly batches: number;
  /** How many brokers (each with one writer) the sums cover. */
  readonly writers: number;
}

/** Reads the commit time of each broker and sums it. */
export async function readCommitTime(brokers: readonly Pick<BrokerChild, "metricsAddress">[]): Promise<CommitTime> {
  const readings = await Promise.all(
    brokers.map(async (broker) => {
      const samples = await scrapeBroker(broker.metricsAddress);
      return {
        seconds: requireValue(samples, "holdshelf_storage_commit_seconds_sum"),
        batches: requireValue(samples, "holdshelf_storage_commit_seconds_count"),
      };
    }),
  );
  return {
    seconds: readings.reduce((total, reading) => total + reading.seconds, 0),
    batches: readings.reduce((total, reading) => total + reading.batches, 0),
    writers: brokers.length,
  };
}

/**
 * How long a group-commit batch took to write, and the share of the window
 * a broker's one writer spent writing (the mean over the brokers): near 1,
 * the rate is bound by the store's commit latency (the load keeps only so
 * many calls waiting), not by CPU.
 */
export function commitTimeFigures(
  before: CommitTime,
  after: CommitTime,
  windowSeconds: number,
): Record<string, number> {
  const seconds = after.seconds - before.seconds;
  return {
    "mean group commit ms": (1000 * seconds) / (after.batches - before.batches),
    "writer busy share": seconds / (windowSeconds * after.writers),
  };
}
