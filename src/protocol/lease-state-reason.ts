import type { Reason } from "./error-reasons.js";

/**
 * The reasons a Heartbeat stream gives for a lease it does not hold: the
 * stable error reason of a refused renewal, or one of the two endings that
 * are not errors.
 */
export const LeaseEnding = {
  /** The renewal asked for a visibility timeout of 0, and the message is visible again. */
  RELEASED: "RELEASED",
  /** The broker noticed the lease ran out on its own, and tells the stream that held it. */
  LEASE_EXPIRED: "LEASE_EXPIRED",
} as const;
/** An ending of a lease that is not an error. */
export type LeaseEnding = (typeof LeaseEnding)[keyof typeof LeaseEnding];

/** Why a lease is not held, as a LeaseState says. */
export type LeaseStateReason = Reason | LeaseEnding;

/**
 * Renewal failures that mean the lease is gone for good (the message was
 * deleted or received again, or the handle was never valid), so the stream
 * stops tracking it. Other refusals, such as a bad timeout or an extension
 * past the lease cap, leave the lease held until its deadline.
 */
export const leaseGoneReasons: ReadonlySet<Reason> = new Set<Reason>([
  "LEASE_SUPERSEDED",
  "MESSAGE_NOT_FOUND",
  "RECEIPT_HANDLE_INVALID",
]);

/**
 * Renewal failures that change nothing: the request was refused (a bad
 * timeout or checkpoint, an extension past the lease cap), and the lease
 * keeps its deadline, so its handle still works for a release or a delete.
 */
export const leaseRefusalReasons: ReadonlySet<string> = new Set<Reason>(["INVALID_ARGUMENT", "LEASE_LIMIT_EXCEEDED"]);
