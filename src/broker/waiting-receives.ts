import { tooManyWaitingReceives } from "./broker-limits.js";
import type { Clock, Timer } from "../time/clock.js";
import type { QueueState } from "./queue-state.js";

/** Tries to take messages for a waiting receive; undefined when there is nothing (or no room) yet. */
export type TakeAttempt<T> = () => T | undefined;

interface Waiter<T> {
  readonly take: TakeAttempt<T>;
  /** A long poll, counted against the limit; a Subscribe stream's wait is not. */
  readonly counted: boolean;
  readonly settle: (taken: T | undefined, error?: unknown) => void;
}

/**
 * Long polls. A waiting receive is offered messages the moment they may be
 * available, in arrival order; taking is synchronous, so two waiters can
 * never take the same message. A waiter whose caller gave up is removed
 * before it can take anything. At most `max` wait at once, broker-wide: each
 * holds a call, a timer and a closure, and clients could open them without end.
 * A Subscribe stream waits too, without end and outside that count: it is
 * bounded by the subscribers a queue may have, and its turn comes like any.
 */
export class WaitingReceives {
  private readonly waiters = new Map<QueueState, Waiter<unknown>[]>();
  private waiting = 0;

  constructor(
    private readonly clock: Clock,
    private readonly max = Infinity,
  ) {}

  /** How many receives wait now, over all queues. */
  get size(): number {
    return this.waiting;
  }

  /**
   * Waits up to `waitMs` (Infinity: until taken or aborted) for `take` to succeed; resolves undefined on
   * timeout or abort. Rejects with TOO_MANY_WAITING_RECEIVES when `max` long polls already wait.
   */
  wait<T>(
    queue: QueueState,
    take: TakeAttempt<T>,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<T | undefined> {
    const counted = waitMs !== Infinity;
    if (counted && this.waiting >= this.max && !signal?.aborted) {
      return Promise.reject(tooManyWaitingReceives(this.max));
    }
    return new Promise<T | undefined>((resolve, reject) => {
      let timer: Timer | undefined;
      const onAbort = (): void => waiter.settle(undefined);
      const waiter: Waiter<T> = {
        take,
        counted,
        settle: (taken, error) => {
          this.forget(queue, waiter as Waiter<unknown>);
          timer?.cancel();
          signal?.removeEventListener("abort", onAbort);
          if (error === undefined) resolve(taken);
          else reject(error);
        },
      };
      if (signal?.aborted) return resolve(undefined);
      const list = this.waiters.get(queue) ?? [];
      list.push(waiter as Waiter<unknown>);
      this.waiters.set(queue, list);
      if (counted) {
        this.waiting++;
        timer = this.clock.setTimer(waitMs, () => waiter.settle(undefined));
      }
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Offers a queue's messages to its waiters, oldest waiter first, until one cannot take. */
  serve(queue: QueueState): void {
    const list = this.waiters.get(queue);
    while (list !== undefined && list.length > 0) {
      const waiter = list[0]!;
      const taken = waiter.take();
      if (taken === undefined) return;
      waiter.settle(taken);
    }
  }

  /** Ends every wait on a queue with an error (the queue was deleted). */
  failAll(queue: QueueState, error: unknown): void {
    for (const waiter of [...(this.waiters.get(queue) ?? [])]) waiter.settle(undefined, error);
  }

  /**
   * The broker is closing: every long poll fails with `reason` (SHUTTING_DOWN: retryable, so the
   * client asks another broker or this one once it is back), and every stream's wait ends empty-handed,
   * as its stream ends on its own (LeaseStreams.closing).
   */
  releaseAll(reason: unknown): void {
    for (const list of [...this.waiters.values()]) {
      for (const waiter of [...list]) waiter.settle(undefined, waiter.counted ? reason : undefined);
    }
  }

  private forget(queue: QueueState, waiter: Waiter<unknown>): void {
    const list = this.waiters.get(queue);
    if (list === undefined) return;
    const index = list.indexOf(waiter);
    if (index >= 0) {
      list.splice(index, 1);
      if (waiter.counted) this.waiting--;
    }
    if (list.length === 0) this.waiters.delete(queue);
  }
}
