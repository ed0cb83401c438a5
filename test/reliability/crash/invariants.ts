import { DEAD_LETTERS, JOBS, MAX_RECEIVE_COUNT } from "./crash-queues.js";
import type { DeliveryRecord, Ledger, LeaseOpRecord } from "./ledger.js";
import { leaseFacts, type LeaseFacts } from "./lease-windows.js";

/** What the checks counted, and every violation found (empty when the broker kept its promises). */
export interface CheckResult {
  readonly sendsAttempted: number;
  readonly sendsAcknowledged: number;
  readonly deliveries: number;
  readonly drainDeliveries: number;
  readonly deletesAcknowledged: number;
  readonly strictDeletes: number;
  readonly deadLettered: number;
  /** Acknowledged ChangeVisibility extensions, Heartbeat and Subscribe renewals, releases (either way) and Subscribe failures. */
  readonly extensionsAcknowledged: number;
  readonly renewalsAcknowledged: number;
  readonly releasesAcknowledged: number;
  readonly failuresAcknowledged: number;
  /** Acknowledged failures with a retry delay, each compared with every later delivery from its queue. */
  readonly retryHoldsChecked: number;
  readonly leasesChecked: number;
  readonly leaseWindows: number;
  /** The SQS endpoint's share: acknowledged sends, deliveries (not the drain's), certain deletes, acknowledged visibility changes. */
  readonly sqsSendsAcknowledged: number;
  readonly sqsDeliveries: number;
  readonly sqsStrictDeletes: number;
  readonly sqsChangesAcknowledged: number;
  /** Messages acknowledged over one API and delivered to a worker (not the drain) over the other. */
  readonly sentOverSqsReceivedOverGrpc: number;
  readonly sentOverGrpcReceivedOverSqs: number;
  readonly violations: string[];
}

/** Clock slack allowed on every time comparison, in ms. */
export const MARGIN_MS = 50;
/** Violations printed in full; the rest are only counted. */
const maxListed = 40;

/**
 * Checks a finished run (after the final drain) against the three promises:
 * nothing acknowledged is lost or stored twice, nothing acknowledged as
 * deleted comes back, and no lease ends early (nor a failure's retry delay).
 */
export function checkInvariants(ledger: Ledger): CheckResult {
  const violations: string[] = [];
  const byMessage = new Map<string, DeliveryRecord[]>();
  for (const d of ledger.deliveries) {
    const list = byMessage.get(d.messageId);
    if (list) list.push(d);
    else byMessage.set(d.messageId, [d]);
  }
  const facts = new Map<DeliveryRecord, LeaseFacts>();
  for (const d of ledger.deliveries) facts.set(d, leaseFacts(d, ledger.leaseOps.get(d.handle) ?? [], MARGIN_MS));
  const noticesByHandle = new Map<string, number[]>();
  for (const n of ledger.notices) noticesByHandle.set(n.handle, [...(noticesByHandle.get(n.handle) ?? []), n.at]);
  const sentTo = new Map(ledger.sends.map((s) => [s.uid, s.queue]));

  // 1. Acknowledged sends: stored once, never lost, in the right queue.
  const idsByUid = new Map<string, Set<string>>();
  for (const d of ledger.deliveries) {
    const ids = idsByUid.get(d.uid) ?? new Set<string>();
    ids.add(d.messageId);
    idsByUid.set(d.uid, ids);
  }
  for (const [uid, ids] of idsByUid) {
    if (ids.size > 1) violations.push(`body ${uid} stored as ${ids.size} messages: ${[...ids].join(", ")}`);
  }
  for (const [messageId, list] of byMessage) {
    const drained = list.filter((d) => d.drain);
    if (drained.length > 1)
      violations.push(
        `${messageId} found ${drained.length} times by the drain: ${drained.map((d) => d.queue).join(", ")}`,
      );
    for (const d of list) {
      const home = sentTo.get(d.uid);
      const expected = home === JOBS ? [JOBS, DEAD_LETTERS] : [home];
      if (!expected.includes(d.queue))
        violations.push(`${messageId} (${d.uid}, sent to ${home ?? "?"}) delivered from ${d.queue}`);
      if (d.queue === JOBS && d.receiveCount > MAX_RECEIVE_COUNT) {
        violations.push(
          `${messageId} delivered from ${JOBS} with receive count ${d.receiveCount}, past max_receive_count`,
        );
      }
    }
    const fromDlq = list.filter((d) => d.queue === DEAD_LETTERS);
    for (const dlq of fromDlq) {
      const back = list.find((d) => d.queue === JOBS && d.start >= dlq.end);
      if (back)
        violations.push(
          `${messageId} delivered from ${JOBS} at ${back.start} after its delivery from ${DEAD_LETTERS} at ${dlq.end}`,
        );
    }
  }
  let sendsAcknowledged = 0;
  let sqsSendsAcknowledged = 0;
  let sentOverSqsReceivedOverGrpc = 0;
  let sentOverGrpcReceivedOverSqs = 0;
  // Nothing is invented: a refused send stored nothing.
  const acknowledgedOrUnknown = new Set(ledger.sends.filter((s) => s.outcome !== "rejected").map((s) => s.uid));
  for (const [messageId, list] of byMessage) {
    const uid = list[0]!.uid;
    if (sentTo.has(uid) && !acknowledgedOrUnknown.has(uid))
      violations.push(`${messageId} (${uid}) delivered though its send was refused`);
  }
  for (const send of ledger.sends) {
    if (send.outcome !== "ok") continue;
    sendsAcknowledged++;
    if (send.wire === "sqs") sqsSendsAcknowledged++;
    const list = byMessage.get(send.messageId!) ?? [];
    if (list.length === 0) {
      violations.push(`${send.messageId} (${send.uid}) acknowledged at ${send.end} was never delivered: lost`);
    } else if (!list.some((d) => d.drain) && !list.some((d) => facts.get(d)!.maybeDeleted)) {
      violations.push(`${send.messageId} (${send.uid}) was never deleted and the drain did not find it: lost`);
    }
    if (list.some((d) => d.uid !== send.uid))
      violations.push(`${send.messageId} delivered with another body than ${send.uid}`);
    if (list.some((d) => !d.drain && d.wire !== send.wire)) {
      if (send.wire === "sqs") sentOverSqsReceivedOverGrpc++;
      else sentOverGrpcReceivedOverSqs++;
    }
  }

  // 2. Acknowledged deletes, and 3. leases, message by message.
  let deletesAcknowledged = 0;
  let strictDeletes = 0;
  let sqsStrictDeletes = 0;
  let leasesChecked = 0;
  let leaseWindows = 0;
  let retryHoldsChecked = 0;
  for (const [messageId, list] of byMessage) {
    for (const d of list) {
      const f = facts.get(d)!;
      f.refusedWhileHeld.forEach((r) => {
        violations.push(`${messageId} lease ${short(d.handle)} from ${d.queue}: ${r}`);
      });
      for (const del of f.deletes) {
        deletesAcknowledged++;
        if (del.strict) strictDeletes++;
        if (del.strict && del.wire === "sqs") sqsStrictDeletes++;
        const again = list.find((o) => o.start >= del.end && (del.strict || o.queue === d.queue));
        if (again) {
          violations.push(
            `${messageId} delivered from ${again.queue} (Receive started ${again.start}) after its Delete on ${d.queue} returned OK at ${del.end}`,
          );
        }
      }
      if (f.windows.length > 0) leasesChecked++;
      for (const w of f.windows) {
        leaseWindows++;
        const early = list.find((o) => o !== d && o.start >= w.from && o.end + MARGIN_MS < w.until);
        if (early) {
          violations.push(
            `${messageId} delivered again from ${early.queue} (Receive ${early.start}..${early.end}) while lease ${short(d.handle)} ` +
              `certainly held it (${w.from}..${w.until}, ${w.until - early.end} ms before its deadline); ` +
              history(d, ledger.leaseOps.get(d.handle) ?? []) +
              `; broker lives meanwhile: ${JSON.stringify(ledger.lives.filter((l) => (l.killed ?? Infinity) >= w.from && l.started <= early.end))}`,
          );
        }
        const notice = noticesByHandle.get(d.handle)?.find((at) => at >= w.from && at + MARGIN_MS < w.until);
        if (notice !== undefined)
          violations.push(
            `${messageId} lease ${short(d.handle)} reported LEASE_EXPIRED at ${notice}, before ${w.until}`,
          );
      }
      for (const h of f.retryHolds) {
        retryHoldsChecked++;
        // A failure at max_receive_count moves the message to the dead-letter queue at once: only its own queue waits.
        const early = list.find((o) => o.queue === d.queue && o.start >= h.from && o.end + MARGIN_MS < h.until);
        if (early)
          violations.push(
            `${messageId} delivered again from ${d.queue} (${early.start}..${early.end}) before the retry delay of its ` +
              `failure ended (${h.from}..${h.until}); ${history(d, ledger.leaseOps.get(d.handle) ?? [])}`,
          );
      }
    }
  }
  let extensionsAcknowledged = 0;
  let renewalsAcknowledged = 0;
  let releasesAcknowledged = 0;
  let failuresAcknowledged = 0;
  let sqsChangesAcknowledged = 0;
  for (const ops of ledger.leaseOps.values()) {
    for (const o of ops) {
      if (o.outcome !== "ok" || o.kind === "delete") continue;
      if (o.wire === "sqs") sqsChangesAcknowledged++;
      if (o.kind === "fail") failuresAcknowledged++;
      else if (o.visibilityMs === 0) releasesAcknowledged++;
      else if (o.kind === "renew") renewalsAcknowledged++;
      else extensionsAcknowledged++;
    }
  }
  for (const problem of ledger.unexpected) violations.push(`unexpected: ${problem}`);

  const listed = violations.slice(0, maxListed);
  if (violations.length > maxListed) listed.push(`... and ${violations.length - maxListed} more`);
  return {
    sendsAttempted: ledger.sends.length,
    sendsAcknowledged,
    deliveries: ledger.deliveries.filter((d) => !d.drain).length,
    drainDeliveries: ledger.deliveries.filter((d) => d.drain).length,
    deletesAcknowledged,
    strictDeletes,
    extensionsAcknowledged,
    renewalsAcknowledged,
    releasesAcknowledged,
    failuresAcknowledged,
    retryHoldsChecked,
    deadLettered: new Set(ledger.deliveries.filter((d) => d.queue === DEAD_LETTERS).map((d) => d.messageId)).size,
    leasesChecked,
    leaseWindows,
    sqsSendsAcknowledged,
    sqsDeliveries: ledger.deliveries.filter((d) => !d.drain && d.wire === "sqs").length,
    sqsStrictDeletes,
    sqsChangesAcknowledged,
    sentOverSqsReceivedOverGrpc,
    sentOverGrpcReceivedOverSqs,
    violations: violations.length > maxListed ? listed : violations,
  };
}

/** A lease's delivery and changes, for a violation's message. */
function history(d: DeliveryRecord, ops: readonly LeaseOpRecord[]): string {
  const steps = ops.map((op) =>
    `${op.kind}(${op.visibilityMs} ms) ${op.start}..${op.end} ${op.outcome} ${op.reason}`.trim(),
  );
  return [
    `received from ${d.queue} ${d.start}..${d.end} for ${d.visibilityMs} ms (receive count ${d.receiveCount})`,
    ...steps,
  ].join(", then ");
}

/** The start of a receipt handle, enough to tell leases apart in a message. */
function short(handle: string): string {
  return handle.slice(0, 12);
}
