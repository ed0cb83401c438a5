import { contentDeduplicationId, fifoDeduplicationId, fifoUid } from "./fifo-bodies.js";
import { checkGroupLeases, checkGroupOrder } from "./fifo-group-checks.js";
import type { FifoLedger, FifoSendRecord } from "./fifo-ledger.js";
import { FIFO_QUEUES } from "./fifo-queues.js";
import { groupBy } from "./group-by.js";
import { checkInvariants } from "./invariants.js";

/** What the FIFO checks counted, and every violation found (empty when the broker kept its promises). */
export interface FifoCheckResult {
  readonly sendsAttempted: number;
  readonly sendsAcknowledged: number;
  /** Distinct messages (group and counter) delivered, and the groups they came in. */
  readonly messages: number;
  readonly groups: number;
  readonly deliveries: number;
  readonly drainDeliveries: number;
  /** Sends retried after an unknown outcome and then acknowledged; of them, those whose first send had been stored before the kill. */
  readonly retriesAcknowledged: number;
  readonly retriesFoundStored: number;
  /** Acknowledged sends repeated on purpose; of them, those repeated in a later broker life than their first acknowledgement. */
  readonly repeatsAcknowledged: number;
  readonly repeatsAcrossRestarts: number;
  /** Receive answers holding several messages of one group. */
  readonly answersWithRuns: number;
  /** Deliveries whose group had earlier messages, each checked gone (or before it in the same answer). */
  readonly orderChecks: number;
  /** Stretches of time a message of a group was certainly leased, in which nothing else of the group may be delivered. */
  readonly groupLeaseWindows: number;
  readonly deletesAcknowledged: number;
  readonly releasesAcknowledged: number;
  readonly extensionsAcknowledged: number;
  readonly leasesChecked: number;
  readonly violations: string[];
}

/** Violations printed in full; the rest are only counted. */
const maxListed = 40;

/**
 * Checks a finished FIFO run (after the final drain): the shared promises
 * (invariants.ts: nothing acknowledged lost or stored twice, no delete
 * revived, no lease ended early), and FIFO's own:
 * - order: a message is delivered only once every earlier message of its
 *   group is gone (deleted by a call begun before the Receive answered),
 *   unless they came just before it in the same answer;
 * - one lease at a time: nothing of a group is delivered while another
 *   message of it is certainly leased, unless in the same answer;
 * - deduplication: every acknowledged send of one message, first, retried or
 *   repeated, answers the same message id and sequence number;
 * - sequence numbers increase with the counter in each group, and no two
 *   messages of a queue share one;
 * - deliveries carry the group and deduplication id they were sent with;
 * - every message each producer made was acknowledged in the end
 *   (`counters`: each group's next counter).
 */
export function checkFifoInvariants(ledger: FifoLedger, counters: ReadonlyMap<string, number>): FifoCheckResult {
  const shared = checkInvariants(ledger);
  const violations = [...shared.violations];
  const acknowledged = ledger.sends.filter((s) => s.outcome === "ok");
  const deliveriesByUid = groupBy(ledger.deliveries, (d) => d.uid);

  // Deduplication: one id and one sequence number per message, whatever the attempt.
  const answerOf = new Map<string, FifoSendRecord>();
  for (const send of acknowledged) {
    const first = answerOf.get(send.uid);
    if (first === undefined) answerOf.set(send.uid, send);
    else if (first.messageId !== send.messageId || first.sequenceNumber !== send.sequenceNumber) {
      violations.push(
        `${send.uid} stored twice: its ${first.attempt} send answered ${first.messageId} (sequence ${first.sequenceNumber}) ` +
          `at ${first.end}, its ${send.attempt} send ${send.messageId} (sequence ${send.sequenceNumber}) at ${send.end}`,
      );
    }
  }

  // What each delivery carries.
  const deduplicationKind = new Map(FIFO_QUEUES.map((q) => [q.name, q.deduplication]));
  for (const d of ledger.deliveries) {
    const content = { group: d.group, counter: d.counter };
    const expectedId =
      deduplicationKind.get(d.queue) === "id" ? fifoDeduplicationId(content) : contentDeduplicationId(content);
    if (d.messageGroupId !== d.group)
      violations.push(`${d.messageId} (${d.uid}) delivered with message_group_id "${d.messageGroupId}"`);
    if (d.deduplicationId !== expectedId) {
      violations.push(
        `${d.messageId} (${d.uid}) delivered with deduplication_id "${d.deduplicationId}", not "${expectedId}"`,
      );
    }
    const answered = answerOf.get(d.uid);
    if (answered !== undefined && answered.sequenceNumber !== d.sequenceNumber) {
      violations.push(
        `${d.messageId} (${d.uid}) delivered with sequence number ${d.sequenceNumber}, sent with ${answered.sequenceNumber}`,
      );
    }
  }

  // Sequence numbers (20 digits, so text order is numeric order): as acknowledged, or for a message never acknowledged, as delivered.
  const numbered = new Map<string, { queue: string; group: string; counter: number; sequence: string }>();
  for (const [uid, send] of answerOf) numbered.set(uid, { ...send, sequence: send.sequenceNumber! });
  for (const [uid, list] of deliveriesByUid)
    if (!numbered.has(uid)) numbered.set(uid, { ...list[0]!, sequence: list[0]!.sequenceNumber });
  const owners = new Map<string, string>();
  for (const [uid, { queue, sequence }] of numbered) {
    if (!/^\d{20}$/.test(sequence)) violations.push(`${uid} has sequence number "${sequence}", not 20 digits`);
    const owner = owners.get(`${queue} ${sequence}`);
    if (owner !== undefined) violations.push(`${uid} and ${owner} share sequence number ${sequence} in ${queue}`);
    owners.set(`${queue} ${sequence}`, uid);
  }
  for (const [group, list] of groupBy([...numbered.values()], (m) => m.group)) {
    list.sort((a, b) => a.counter - b.counter);
    for (let i = 1; i < list.length; i++) {
      const [before, after] = [list[i - 1]!, list[i]!];
      if (after.sequence <= before.sequence) {
        violations.push(
          `${group}: message ${after.counter} has sequence number ${after.sequence}, not above message ${before.counter}'s ${before.sequence}`,
        );
      }
    }
  }

  // Every message made was acknowledged in the end.
  for (const [group, next] of counters) {
    for (let counter = 0; counter < next; counter++) {
      if (!answerOf.has(fifoUid({ group, counter })))
        violations.push(`${group}#${counter} was never acknowledged, even after the last restart`);
    }
  }

  // Order within each group.
  const order = checkGroupOrder(ledger, deliveriesByUid);
  violations.push(...order.violations);
  const leased = checkGroupLeases(ledger);
  violations.push(...leased.violations);

  // Figures.
  const lifeOf = (send: FifoSendRecord) => ledger.lives[send.life]!;
  const retries = acknowledged.filter((s) => s.attempt === "retry");
  const repeats = acknowledged.filter((s) => s.attempt === "repeat");
  const firstLife = new Map<string, number>();
  for (const send of acknowledged)
    if (send.attempt !== "repeat" && !firstLife.has(send.uid)) firstLife.set(send.uid, send.life);
  const listed = violations.slice(0, maxListed);
  if (violations.length > maxListed) listed.push(`... and ${violations.length - maxListed} more`);
  return {
    sendsAttempted: ledger.sends.length,
    sendsAcknowledged: acknowledged.length,
    messages: deliveriesByUid.size,
    groups: new Set(ledger.deliveries.map((d) => d.group)).size,
    deliveries: shared.deliveries,
    drainDeliveries: shared.drainDeliveries,
    retriesAcknowledged: retries.length,
    retriesFoundStored: retries.filter((s) => messageIdTime(s.messageId!) < lifeOf(s).started).length,
    repeatsAcknowledged: repeats.length,
    repeatsAcrossRestarts: repeats.filter((s) => (firstLife.get(s.uid) ?? s.life) < s.life).length,
    answersWithRuns: order.answersWithRuns,
    orderChecks: order.checks,
    groupLeaseWindows: leased.windows,
    deletesAcknowledged: shared.deletesAcknowledged,
    releasesAcknowledged: shared.releasesAcknowledged,
    extensionsAcknowledged: shared.extensionsAcknowledged,
    leasesChecked: shared.leasesChecked,
    violations: listed,
  };
}

/** The milliseconds a UUIDv7 message id starts with: when the broker stored it. */
function messageIdTime(messageId: string): number {
  return parseInt(messageId.replaceAll("-", "").slice(0, 12), 16);
}
