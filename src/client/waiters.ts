/** One caller waiting on the outcome of something a request carries. */
export interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** Resolves every waiter, or rejects every one with `error`. */
export function settle(waiters: readonly Waiter[], error?: unknown): void {
  for (const waiter of waiters) {
    if (error === undefined) waiter.resolve();
    else waiter.reject(error);
  }
}
