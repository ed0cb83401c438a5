import type { LeaseReason } from "./types.js";

/**
 * Why a handler's lease ended before it settled its message: the reason a
 * Heartbeat LeaseState gave (LEASE_EXPIRED, LEASE_SUPERSEDED,
 * MESSAGE_NOT_FOUND, LEASE_LIMIT_EXCEEDED, ...), QUEUE_NOT_FOUND when the
 * queue went away, or RELEASED when Consumer.stop() gave the message back.
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
