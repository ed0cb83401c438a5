import type { LeaseReason } from "./types.js";

/**
 * Why a handler's lease ended before it settled its message: the reason a
 * Heartbeat LeaseState gave (LEASE_EXPIRED, LEASE_SUPERSEDED,
 * MESSAGE_NOT_FOUND, LEASE_LIMIT_EXCEEDED, ...), QUEUE_NOT_FOUND when the
 * queue went away, RELEASED when Consumer.stop() gave the message back, or,
 * for a handled message whose delete came too late, DEAD_LETTERED or
 * RECEIVED_AGAIN (what the delete's outcome said happened first).
 */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";

  constructor(
    readonly receiptHandle: string,
    /** The stable reason, e.g. LEASE_EXPIRED; possibly one newer than this client (see LeaseReason). */
    readonly reason: LeaseReason,
  ) {
    super(`the lease of this message was lost: ${reason}`);
  }
}
