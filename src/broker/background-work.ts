/**
 * Work the broker starts without a caller to answer (dead-letter moves,
 * writes after a lease expired): failures go to `onError`, and `settled`
 * waits for all of it, so that a shutdown does not close the store under a
 * move half done and tests need not guess how long to wait.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Runs `work` in the background. */
  start(work: Promise<unknown>): void {
    const tracked = work.catch(this.onError).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Resolves once everything started so far, and anything it started, has finished. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
