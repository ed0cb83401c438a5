import { fifoUid } from "./fifo-bodies.js";
import type { FifoDeliveryRecord, FifoLedger } from "./fifo-ledger.js";
import { groupBy } from "./group-by.js";
import { MARGIN_MS } from "./invariants.js";
import { leaseFacts } from "./lease-windows.js";

// The checks of what FIFO promises about a group's deliveries, for fifo-invariants.ts.

/**
 * A message is delivered only once each earlier message of its group is
 * gone, or came before it in the same answer (whose messages of one group
 * must come in order). Gone means deleted by a call
 * begun before the Receive answered: acknowledged, or broken at a kill and
 * never followed by another delivery of that message (which would show it
 * did not apply). That is the broker's promise read from client time only:
 * a later message's delivery can only be judged against calls that had
 * begun by the time it was answered.
 */
export function checkGroupOrder(
  ledger: FifoLedger,
  deliveriesByUid: ReadonlyMap<string, FifoDeliveryRecord[]>,
): { violations: string[]; checks: number; answersWithRuns: number } {
  const violations: string[] = [];
  const goneAt = new Map<string, number>();
  for (const [uid, list] of deliveriesByUid) {
    let gone = Infinity;
    for (const d of list) {
      for (const op of ledger.leaseOps.get(d.handle) ?? []) {
        if (op.kind !== "delete" || op.outcome === "rejected") continue;
        const applied = op.outcome === "ok" || !list.some((other) => other !== d && other.end > op.start);
        if (applied) gone = Math.min(gone, op.start);
      }
    }
    goneAt.set(uid, gone);
  }
  // A message never delivered was never gone.
  const gone = (group: string, counter: number) => goneAt.get(fifoUid({ group, counter })) ?? Infinity;
  // Per group, for each counter k: the latest time a message below k was gone, and which message that was.
  const latestGone = new Map<string, { at: number; counter: number }[]>();
  for (const d of ledger.deliveries) {
    const prefix = latestGone.get(d.group) ?? [{ at: -Infinity, counter: -1 }];
    for (let counter = prefix.length - 1; counter < d.counter; counter++) {
      const at = gone(d.group, counter);
      prefix.push(at > prefix[counter]!.at ? { at, counter } : prefix[counter]!);
    }
    latestGone.set(d.group, prefix);
  }
  let checks = 0;
  let answersWithRuns = 0;
  for (const answer of groupBy(ledger.deliveries, (d) => d.receive).values()) {
    const runs = groupBy(answer, (d) => d.group);
    if (runs.size < answer.length) answersWithRuns++;
    for (const run of runs.values()) {
      // A group's messages in one answer (in answer order) need not wait for each other, but each
      // waits for the ones between it and the one before it, which must be gone (deleted meanwhile).
      run.sort((a, b) => a.position - b.position);
      run.forEach((d, i) => {
        const before = run[i - 1];
        if (before !== undefined && before.counter >= d.counter) {
          violations.push(
            `${d.group}: message ${d.counter} (${d.messageId}) came after message ${before.counter} in one answer, ${d.start}..${d.end}`,
          );
          return;
        }
        if (d.counter > 0) checks++;
        let blocker = before === undefined ? latestGone.get(d.group)![d.counter]! : { at: -Infinity, counter: -1 };
        for (let counter = (before?.counter ?? d.counter) + 1; counter < d.counter; counter++) {
          const at = gone(d.group, counter);
          if (at > blocker.at) blocker = { at, counter };
        }
        if (blocker.at < d.end) return;
        const history = story(fifoUid({ group: d.group, counter: blocker.counter }), deliveriesByUid, ledger);
        violations.push(
          `${d.group}: message ${d.counter} (${d.messageId}) delivered by a Receive ${d.start}..${d.end}${d.drain ? " (the drain's)" : ""} ` +
            `while message ${blocker.counter} was not gone: ${history}`,
        );
      });
    }
  }
  return { violations, checks, answersWithRuns };
}

/**
 * While a message of a group is certainly leased (lease-windows.ts reads
 * that from client time), no other message of the group is delivered,
 * unless in the same answer. A redelivery of the leased message itself is
 * the shared checks' business (a lease ended early).
 */
export function checkGroupLeases(ledger: FifoLedger): { violations: string[]; windows: number } {
  const violations: string[] = [];
  let windows = 0;
  for (const list of groupBy(ledger.deliveries, (d) => d.group).values()) {
    const byStart = [...list].sort((a, b) => a.start - b.start);
    for (const d of list) {
      for (const w of leaseFacts(d, ledger.leaseOps.get(d.handle) ?? [], MARGIN_MS).windows) {
        windows++;
        for (let i = firstStartingAt(byStart, w.from); i < byStart.length && byStart[i]!.start < w.until; i++) {
          const other = byStart[i]!;
          if (other.uid === d.uid || other.receive === d.receive || other.end + MARGIN_MS >= w.until) continue;
          violations.push(
            `${d.group}: message ${other.counter} (${other.messageId}) delivered by a Receive ${other.start}..${other.end} ` +
              `while message ${d.counter} was certainly leased (${w.from}..${w.until}): ${deliveryStory(d, ledger)}`,
          );
        }
      }
    }
  }
  return { violations, windows };
}

/** The index of the first delivery (sorted by start) that starts at or after `time`. */
function firstStartingAt(byStart: readonly FifoDeliveryRecord[], time: number): number {
  let low = 0;
  let high = byStart.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byStart[middle]!.start < time) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A message's deliveries and delete calls, for a violation's message. */
function story(uid: string, deliveriesByUid: ReadonlyMap<string, FifoDeliveryRecord[]>, ledger: FifoLedger): string {
  const list = deliveriesByUid.get(uid) ?? [];
  return list.length === 0 ? "never delivered" : list.map((d) => deliveryStory(d, ledger)).join("; ");
}

/** One delivery and the calls on its lease. */
function deliveryStory(d: FifoDeliveryRecord, ledger: FifoLedger): string {
  const ops = (ledger.leaseOps.get(d.handle) ?? []).map(
    (op) => `${op.kind}(${op.visibilityMs}) ${op.start}..${op.end} ${op.outcome}`,
  );
  return `delivered ${d.start}..${d.end} for ${d.visibilityMs} ms${ops.length > 0 ? `, then ${ops.join(", ")}` : ""}`;
}
