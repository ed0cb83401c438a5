/** Writes one batch of operations atomically and durably. */
export type BatchWriter<Op> = (ops: Op[]) => Promise<void>;

/** Told of each batch a group commit writes, for metrics and logs. */
export interface CommitObserver {
  /** A batch was written: how long the write (and its fsync) took, and how many commits shared it. */
  written(seconds: number, commits: number): void;
  /** A batch failed: every one of its commits is rejected with `error`. */
  failed(error: unknown, commits: number): void;
}

const unobserved: CommitObserver = { written: () => undefined, failed: () => undefined };

/** What a group commit has done, for metrics and benchmarks. */
export interface GroupCommitStats {
  /** Batches written (one fsync each in fsync durability). */
  batches: number;
  /** Commit calls those batches carried. */
  commits: number;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: commits that arrive while a batch is being written wait and
 * then share the next batch, so concurrent callers pay for one fsync between
 * them rather than one each. Batches are written one at a time, in call order.
 *
 * A failed batch stops every later one (fail-stop): they may build on
 * changes that batch never wrote, and LevelDB may have left a torn record in
 * its log. Commits are refused with the same error until `resume()`, which
 * the owner calls once it reopened the database and rebuilt its state.
 */
export class GroupCommit<Op> {
  readonly stats: GroupCommitStats = { batches: 0, commits: 0 };
  private pendingOps: Op[] = [];
  private pendingWaiters: Waiter[] = [];
  private writing = false;
  private failure: unknown;
  private failed = false;

  constructor(
    private readonly write: BatchWriter<Op>,
    private readonly observer: CommitObserver = unobserved,
  ) {}

  /**
   * Resolves once `ops` are written, or rejects if their batch (or any batch
   * before it) failed. With no ops it is a barrier: it resolves once every
   * batch already asked for is written, without a write of its own.
   */
  commit(ops: readonly Op[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failure);
    if (ops.length === 0 && !this.writing) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      for (const op of ops) this.pendingOps.push(op);
      this.pendingWaiters.push({ resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // Wait for the rest of this event-loop turn, so that every request
        // already read from the sockets joins the first batch too.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pendingWaiters.length > 0) {
      const ops = this.pendingOps;
      const waiters = this.pendingWaiters;
      this.pendingOps = [];
      this.pendingWaiters = [];
      if (ops.length === 0) {
        // Barriers alone: the batches before them are written, and they have nothing to write.
        for (const waiter of waiters) waiter.resolve();
        continue;
      }
      this.stats.batches++;
      this.stats.commits += waiters.length;
      try {
        const started = performance.now();
        await this.write(ops);
        this.observer.written((performance.now() - started) / 1000, waiters.length);
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        this.failed = true;
        this.failure = error;
        this.observer.failed(error, waiters.length);
        for (const waiter of waiters) waiter.reject(error);
        // Commits that queued behind it are refused unwritten, and not counted as written batches.
        for (const waiter of this.pendingWaiters) waiter.reject(error);
        this.pendingOps = [];
        this.pendingWaiters = [];
      }
    }
    this.writing = false;
  }

  /** The error that stopped writing, while stopped; undefined while writing works. */
  get stoppedBy(): unknown {
    return this.failed ? this.failure : undefined;
  }

  /** Takes commits again after a failure stopped them. */
  resume(): void {
    this.failed = false;
    this.failure = undefined;
  }
}
