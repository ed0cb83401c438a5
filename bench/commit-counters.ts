/** The broker's group-commit totals, from its metrics. */
export interface CommitCounters {
  /** Batches written: one fsync each in fsync durability. */
  readonly batches: number;
  /** Commit calls those batches carried. */
  readonly commits: number;
}

/** Reads the group-commit totals from a broker's /metrics. */
export async function readCommitCounters(metricsAddress: string): Promise<CommitCounters> {
  const text = await (await fetch(`http://${metricsAddress}/metrics`)).text();
  const value = (name: string): number => {
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    if (match === null) throw new Error(`no ${name} in the broker's metrics`);
    return Number(match[1]);
  };
  return { batches: value("holdshelf_storage_commit_seconds_count"), commits: value("holdshelf_storage_commit_batch_size_sum") };
}
