import { monotonicClock, type Clock, type Timer } from "../time/clock.js";

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
  /** Commit calls with ops that those batches carried (barriers are not counted). */
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
 * A commit may also linger: wait up to `lingerMs` for company before its
 * batch starts, as Kafka's producers do with linger.ms. Heartbeat renewals
 * use it: a thousand streams renewing every few seconds arrive one at a time,
 * so without it each renewal paid a write and an fsync of its own (most of
 * its cost). A commit that does not linger starts the batch at once, taking
 * every lingering commit with it.
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
  /** Pending waiters that brought ops: barriers are not counted as commits. */
  private pendingCommits = 0;
  /** When the pending commits' batch must start, by `clock`: the earliest arrival plus its linger. */
  private pendingStartBy = Infinity;
  private writing = false;
  /** A batch start armed for later (lingering commits only) or for this turn's end. */
  private startTimer: Timer | undefined;
  private startsThisTurn = false;
  private failure: unknown;
  private failed = false;

  constructor(
    private readonly write: BatchWriter<Op>,
    private readonly observer: CommitObserver = unobserved,
    private readonly clock: Clock = monotonicClock,
  ) {}

  /**
   * Resolves once `ops` are written, or rejects if their batch (or any batch
   * before it) failed. With no ops it is a barrier: it resolves once every
   * batch already asked for is written, without a write of its own. With
   * `lingerMs`, the batch may wait that long for other commits to share it.
   */
  commit(ops: readonly Op[], lingerMs = 0): Promise<void> {
    if (this.failed) return Promise.reject(this.failure);
    if (ops.length === 0 && !this.writing && this.pendingWaiters.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      for (const op of ops) this.pendingOps.push(op);
      this.pendingWaiters.push({ resolve, reject });
      if (ops.length > 0) this.pendingCommits++;
      // A barrier never lingers: it waits for what was asked before it.
      const startBy = ops.length === 0 ? this.clock.now() : this.clock.now() + lingerMs;
      this.pendingStartBy = Math.min(this.pendingStartBy, startBy);
      if (!this.writing) this.armStart();
    });
  }

  /** Starts the pending batch when its earliest commit wants it: at this turn's end, or when a linger runs out. */
  private armStart(): void {
    const delayMs = this.pendingStartBy - this.clock.now();
    if (delayMs <= 0) {
      if (this.startsThisTurn) return;
      this.startTimer?.cancel();
      this.startTimer = undefined;
      this.startsThisTurn = true;
      // Wait for the rest of this event-loop turn, so that every request
      // already read from the sockets joins the batch too.
      setImmediate(() => this.start());
      return;
    }
    if (this.startsThisTurn) return;
    this.startTimer?.cancel();
    this.startTimer = this.clock.setTimer(delayMs, () => this.start());
  }

  private start(): void {
    this.startTimer?.cancel();
    this.startTimer = undefined;
    this.startsThisTurn = false;
    if (this.writing || this.pendingWaiters.length === 0) return;
    this.writing = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    // After each batch, the next starts at once only if a commit that queued
    // meanwhile is due; lingering ones are armed to start when theirs runs out.
    while (this.pendingWaiters.length > 0 && this.pendingStartBy <= this.clock.now()) {
      const ops = this.pendingOps;
      const waiters = this.pendingWaiters;
      const commitCount = this.pendingCommits;
      this.pendingOps = [];
      this.pendingCommits = 0;
      this.pendingWaiters = [];
      this.pendingStartBy = Infinity;
      if (ops.length === 0) {
        // Barriers alone: the batches before them are written, and they have nothing to write.
        for (const waiter of waiters) waiter.resolve();
        continue;
      }
      this.stats.batches++;
      this.stats.commits += commitCount;
      try {
        const started = performance.now();
        await this.write(ops);
        this.observer.written((performance.now() - started) / 1000, commitCount);
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        this.failed = true;
        this.failure = error;
        this.observer.failed(error, commitCount);
        for (const waiter of waiters) waiter.reject(error);
        // Commits that queued behind it are refused unwritten, and not counted as written batches.
        for (const waiter of this.pendingWaiters) waiter.reject(error);
        this.pendingOps = [];
        this.pendingWaiters = [];
        this.pendingCommits = 0;
        this.pendingStartBy = Infinity;
      }
    }
    this.writing = false;
    if (this.pendingWaiters.length > 0) this.armStart();
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
