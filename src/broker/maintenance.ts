import type { StoreOp } from "../store/store.js";
import { removeMessageOp } from "./store-ops.js";
import type { Clock, Timer } from "../time/clock.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import type { WaitingReceives } from "./waiting-receives.js";

/** How often retention is enforced, in milliseconds. */
export const sweepIntervalMs = 1000;

/** Writes a batch of changes durably. */
type Commit = (ops: readonly StoreOp[]) => Promise<void>;

/** A queue's timer, armed for its earliest hidden ready time. */
interface Wake {
  readonly at: number;
  readonly timer: Timer;
}

/**
 * Time-driven work. Each queue has a timer armed for its earliest hidden
 * ready time, so a delay that ends or a lease that runs out makes its message
 * visible (and wakes long polls) the moment it happens; a periodic sweep
 * removes messages past their retention.
 */
export class Maintenance {
  private sweepTimer: Timer | undefined;
  private readonly wakes = new Map<QueueState, Wake>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly registry: QueueRegistry,
    private readonly waiting: WaitingReceives,
    private readonly commit: Commit,
    private readonly onError: (error: unknown) => void,
    private readonly onLeasesExpired: (queue: QueueState, expired: LiveMessage[]) => void,
    private readonly onRetentionExpired: (queue: QueueState, removed: LiveMessage[]) => void,
  ) {}

  /** Starts the periodic sweep and arms every queue's timer. */
  start(): void {
    for (const queue of this.registry.all()) this.advance(queue);
    this.armSweep();
  }

  /**
   * Makes due messages visible in one queue, offers them to its waiting
   * receives, and re-arms its timer. Call after any change to the queue.
   *
   * Reads call it too (GetQueue, ListQueues, a metrics scrape), so a read may
   * start writes: a lease that ran out is visible the moment it runs out, and
   * the counts a client reads must say so, however late a busy event loop
   * fires the timer. Counting without advancing cannot be exact: where an
   * expired lease's message goes (visible, delayed by a retry backoff, or to
   * the dead-letter queue) is decided by the rules that run here, and their
   * writes (backoffs, dead-letter moves, waiting receives served) are the
   * ones the timer would have started a moment later.
   */
  advance(queue: QueueState): void {
    if (queue.deleted) return;
    const now = this.clock.now();
    const expired = queue.advance(now);
    if (expired.length > 0) this.onLeasesExpired(queue, expired);
    if (queue.visibleCount > 0) this.waiting.serve(queue);
    this.arm(queue, now);
  }

  /** Runs everything that is due now, in every queue: what the timers do, callable directly by tests. */
  async runDue(): Promise<void> {
    const expiries: Promise<void>[] = [];
    for (const queue of this.registry.all()) {
      this.advance(queue);
      expiries.push(this.expireRetained(queue));
    }
    await Promise.all(expiries);
  }

  /** Stops every timer. */
  stop(): void {
    this.closed = true;
    this.sweepTimer?.cancel();
    for (const wake of this.wakes.values()) wake.timer.cancel();
    this.wakes.clear();
  }

  /** Stops a deleted queue's timer. */
  disarm(queue: QueueState): void {
    this.wakes.get(queue)?.timer.cancel();
    this.wakes.delete(queue);
  }

  /** Removes a queue's messages whose retention has run out, in flight or not, and its expired deduplication ids. */
  private async expireRetained(queue: QueueState): Promise<void> {
    const now = this.clock.now();
    const { retentionMs } = queue.record.config;
    const { dataId } = queue.record;
    const ops: StoreOp[] = [];
    const removed: LiveMessage[] = [];
    for (let message = queue.oldestMessage(); message !== undefined; message = queue.oldestMessage()) {
      if (message.enqueuedAt + retentionMs > now) break;
      queue.remove(message);
      removed.push(message);
      ops.push(removeMessageOp(dataId, message));
    }
    // A FIFO queue's deduplication ids whose five minutes are up leave the store with them.
    if (queue.deduplication !== undefined) ops.push(...queue.deduplication.expire(dataId, now));
    if (removed.length > 0) this.onRetentionExpired(queue, removed);
    if (ops.length > 0) {
      await this.commit(ops);
      // Expired leases free in-flight room.
      this.waiting.serve(queue);
    }
  }

  private arm(queue: QueueState, now: number): void {
    const next = queue.nextReadyAt();
    if (next === undefined || this.closed) return this.disarm(queue);
    const wake = this.wakes.get(queue);
    if (wake !== undefined && wake.at <= next) return;
    wake?.timer.cancel();
    const timer = this.clock.setTimer(next - now, () => {
      this.wakes.delete(queue);
      this.advance(queue);
    });
    this.wakes.set(queue, { at: next, timer });
  }

  private armSweep(): void {
    if (this.closed) return;
    this.sweepTimer = this.clock.setTimer(sweepIntervalMs, () => {
      this.runDue()
        .catch(this.onError)
        .finally(() => this.armSweep());
    });
  }
}
