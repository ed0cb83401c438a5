import type { DeliveryRecord, LeaseOpRecord, Wire } from "./ledger.js";

/** A stretch of client time during which the broker certainly kept a message hidden under one lease. */
export interface LeaseWindow {
  readonly from: number;
  readonly until: number;
}

/** What one lease's history proves. */
export interface LeaseFacts {
  readonly windows: LeaseWindow[];
  /**
   * Acknowledged deletes (over SQS, only those made while the lease was certainly held); `strict`
   * when the lease was certainly held for the whole call, so the message was certainly deleted.
   */
  readonly deletes: { readonly end: number; readonly strict: boolean; readonly wire: Wire }[];
  /** Whether a non-drain Delete was attempted that may have applied (acknowledged or broken). */
  readonly maybeDeleted: boolean;
  /** Refusals (e.g. LEASE_SUPERSEDED) of calls made while the lease was certainly held: the broker lost it. */
  readonly refusedWhileHeld: string[];
  /**
   * Stretches after an acknowledged failure with a retry delay during which
   * the message certainly stayed hidden in its queue (it may have gone to the
   * dead-letter queue at once instead).
   */
  readonly retryHolds: LeaseWindow[];
}

/**
 * Works out, from client timestamps only, when a lease certainly hid its
 * message. A call that changed the lease ran on the broker at some time T
 * between the call's start and its answer, so a deadline of T + v is at
 * least start + v. The Receive gives [answer, start + v]; an acknowledged
 * extension adds [answer, start + v] too. Every call that may have applied
 * (acknowledged, or broken at a kill) caps what came before at its
 * start + v, for it may have shortened the lease from then on; a release or
 * a delete caps at its start, and so does a failure, whose acknowledged
 * retry delay v adds a retry hold [answer, start + v]. `marginMs` absorbs
 * millisecond rounding and timer slack. An OK over SQS from a Delete or a visibility change made
 * while the lease was not certainly held counts as "may have applied" only.
 */
export function leaseFacts(delivery: DeliveryRecord, ops: readonly LeaseOpRecord[], marginMs: number): LeaseFacts {
  const windows: { from: number; until: number }[] = [
    { from: delivery.end, until: delivery.start + delivery.visibilityMs },
  ];
  const deletes: { end: number; strict: boolean; wire: Wire }[] = [];
  const refusedWhileHeld: string[] = [];
  const retryHolds: LeaseWindow[] = [];
  let maybeDeleted = false;
  let ended = false;
  for (const op of ops) {
    // Calls on one lease never overlap, so the windows here reflect only earlier calls.
    const held = !ended && windows.some((w) => w.from <= op.start && op.end + marginMs < w.until);
    if (op.outcome === "rejected") {
      if (held)
        refusedWhileHeld.push(
          `${op.kind} ${op.start}..${op.end} refused with ${op.reason} while the lease was certainly held`,
        );
      continue;
    }
    if (op.kind === "delete" && !delivery.drain) maybeDeleted = true;
    // SQS's DeleteMessage answers a superseded handle OK and deletes nothing, as SQS does: its OK
    // proves a delete only while the lease was certainly held; otherwise it may or may not have applied.
    if (op.kind === "delete" && op.outcome === "ok" && (held || op.wire === "grpc"))
      deletes.push({ end: op.end, strict: held, wire: op.wire });
    if (ended) continue;
    if (op.kind === "fail" && op.outcome === "ok" && op.visibilityMs > 0)
      retryHolds.push({ from: op.end, until: op.start + op.visibilityMs });
    const endsLease = op.kind === "delete" || op.kind === "fail" || op.visibilityMs === 0;
    const cap = op.start + (endsLease ? 0 : op.visibilityMs);
    for (const w of windows) if (w.until > op.start) w.until = Math.min(w.until, cap);
    if (endsLease) ended = true;
    // SQS's ChangeMessageVisibility answers a superseded handle OK too, and changes nothing: its OK
    // proves an extension only while the lease was certainly held.
    else if (op.outcome === "ok" && (held || op.wire === "grpc"))
      windows.push({ from: op.end, until: op.start + op.visibilityMs });
  }
  return {
    windows: windows.filter((w) => w.until > w.from),
    deletes,
    maybeDeleted,
    refusedWhileHeld,
    retryHolds: retryHolds.filter((h) => h.until > h.from),
  };
}
