import type { StoreOp } from "../store/store.js";
import type { BackgroundWork } from "./background-work.js";
import type { Clock } from "../time/clock.js";
import type { DeadLetters } from "./dead-letters.js";
import type { LeaseTracking } from "./lease-tracking.js";
import { isSpent } from "./queue-config.js";
import { retryBackoffMs } from "../protocol/retry-backoff.js";
import type { LiveMessage, QueueState } from "./queue-state.js";

/**
 * How a lease ended without a delete: it ran out; it was released on
 * purpose (a visibility of 0); its holder reported the work failed (a
 * renewal with `failed`); or its Heartbeat stream broke.
 */
export type LeaseEnd = "expired" | "released" | "failed" | "disconnected";

/**
 * What happens to a message whose lease ended without a delete. A spent
 * message (its redrive policy's max_receive_count reached) leaves for the
 * dead-letter queue, in a batch of its own. Any other becomes visible, at
 * once or, when the lease ran out, failed or its stream broke and the queue
 * has a retry policy, after its backoff: an explicit release sets exactly
 * what it asks.
 */
export class LeaseEndings {
  constructor(
    private readonly clock: Clock,
    private readonly tracking: LeaseTracking,
    private readonly deadLetters: DeadLetters,
    private readonly background: BackgroundWork,
  ) {}

  /**
   * Applies the rule to messages whose leases ended; returns the writes the
   * caller must commit. Released messages must already be ready now.
   */
  endAll(queue: QueueState, messages: readonly LiveMessage[], how: LeaseEnd): StoreOp[] {
    const now = this.clock.now();
    const ops: StoreOp[] = [];
    const spent: LiveMessage[] = [];
    const policy = queue.record.config.retryPolicy;
    for (const message of messages) {
      if (isSpent(queue.record.config, message.receiveCount)) {
        queue.remove(message);
        this.tracking.untrack(queue, message.id);
        spent.push(message);
        continue;
      }
      if (how === "released") continue;
      const backoff = policy === undefined ? 0 : retryBackoffMs(policy, message.receiveCount);
      // An expired lease's message is already visible, and the disk agrees.
      if (how === "expired" && backoff === 0) continue;
      ops.push(queue.reschedule(message, now + backoff, false, now));
    }
    if (spent.length > 0) this.background.start(this.deadLetters.deadLetter(queue, spent));
    return ops;
  }
}
