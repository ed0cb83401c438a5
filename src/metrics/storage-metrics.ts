import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { CommitObserver } from "../store/group-commit.js";

// A LevelDB write with fsync takes from under a millisecond (cached, fast
// SSD) to tens of milliseconds (a cloud disk); batch sizes double up to the
// most concurrent callers one would expect.
const commitSecondsBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const batchSizeBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** What the store tells of each batch, and whether storage takes writes. */
export interface StorageMetrics extends CommitObserver {
  /** Storage went down (a write failed) or came back (the store was reopened and writes work). */
  setAvailable(available: boolean): void;
}

/** Registers the group-commit and storage availability metrics. */
export function createStorageMetrics(registry: Registry): StorageMetrics {
  const registers = [registry];
  const commitSeconds = new Histogram({
    name: "holdshelf_storage_commit_seconds",
    help: "Time to write one group-commit batch to LevelDB, fsync included in fsync durability.",
    buckets: commitSecondsBuckets,
    registers,
  });
  const batchSize = new Histogram({
    name: "holdshelf_storage_commit_batch_size",
    help: "Commits that shared one group-commit batch (and its fsync).",
    buckets: batchSizeBuckets,
    registers,
  });
  const failures = new Counter({
    name: "holdshelf_storage_commit_failures_total",
    help: "Group-commit batches LevelDB refused to write; their calls failed.",
    registers,
  });
  let available = true;
  new Gauge({
    name: "holdshelf_storage_available",
    help: "1 while storage takes writes; 0 after a write failed, until the broker has reopened the store and recovered.",
    registers,
    collect() {
      this.set(available ? 1 : 0);
    },
  });
  return {
    setAvailable(value) {
      available = value;
    },
    written(seconds, commits) {
      commitSeconds.observe(seconds);
      batchSize.observe(commits);
    },
    failed() {
      failures.inc();
    },
  };
}
