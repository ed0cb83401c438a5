import { ackError } from "./ack-error.js";
import { leaseLostBeforeDelete } from "./delete-outcome.js";
import { LeaseLostError } from "./lease-lost-error.js";
import type { AckResult } from "./types.js";
import { settle, type Waiter } from "./waiters.js";

/** An ack taken into a request: its receipt handle, and who waits on its result. */
export interface AckEntry {
  readonly handle: string;
  readonly waiters: readonly Waiter[];
}

/**
 * A LeaseKeeper's acks not sent yet: each receipt handle once, however often
 * it was acked, so that the acks asked for while a request is in flight go
 * together in the next.
 */
export class PendingAcks {
  private waiting = new Map<string, Waiter[]>();

  /** How many acks wait. */
  get size(): number {
    return this.waiting.size;
  }

  /** Queues an ack; resolves once the broker confirms it, rejects with the reason it gives. */
  add(handle: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(handle) ?? [];
      waiters.push({ resolve, reject });
      this.waiting.set(handle, waiters);
    });
  }

  /** Takes up to `max` acks, oldest first, for a request. */
  take(max: number): AckEntry[] {
    const taken: AckEntry[] = [];
    for (const [handle, waiters] of this.waiting) {
      if (taken.length === max) break;
      taken.push({ handle, waiters });
      this.waiting.delete(handle);
    }
    return taken;
  }

  /** Puts back the acks of a request that will not be answered, ahead of those asked for since. */
  putBack(entries: readonly AckEntry[]): void {
    const waiting = new Map<string, Waiter[]>();
    for (const { handle, waiters } of entries) waiting.set(handle, [...waiters]);
    for (const [handle, waiters] of this.waiting) waiting.set(handle, [...(waiting.get(handle) ?? []), ...waiters]);
    this.waiting = waiting;
  }

  /** Fails every ack still waiting. */
  failAll(error: unknown): void {
    for (const waiters of this.waiting.values()) settle(waiters, error);
    this.waiting.clear();
  }
}

/**
 * Settles an ack's waiters by the broker's result: deleted; refused with its
 * reason; or come too late, the lease lost before it (a LeaseLostError).
 */
export function settleAck(entry: AckEntry, result: AckResult): void {
  const lost = result.deleteOutcome === undefined ? undefined : leaseLostBeforeDelete(result.deleteOutcome);
  if (lost !== undefined) settle(entry.waiters, new LeaseLostError(entry.handle, lost));
  else settle(entry.waiters, result.reason === "" ? undefined : ackError(result));
}
