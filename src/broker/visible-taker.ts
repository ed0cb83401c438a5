import type { StoreOp } from "../store/store.js";
import { DeadLetters } from "./dead-letters.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import { maxCheckpointBytes, perMessageOverheadBytes, receiveResponseBudgetBytes } from "./request-limits.js";
import { rescheduleOp } from "./store-ops.js";

/** Messages a receive has leased in memory, with the writes that make the leases durable. */
export interface TakenMessages {
  readonly messages: LiveMessage[];
  /** The delivery each lease belongs to, to tell it from a later one. */
  readonly epochs: number[];
  /** When each message had become visible, before this receive took it. */
  readonly readyTimes: number[];
  /** When this receive took them. */
  readonly takenAt: number;
  readonly leaseDeadline: number;
  readonly ops: StoreOp[];
  /**
   * Visible messages that had every delivery their redrive policy allows (a
   * crash or a policy change came between their last lease and their move):
   * taken out of the heaps, never delivered, for the caller to dead-letter.
   */
  readonly spent: LiveMessage[];
}

/**
 * Leases visible messages in memory, oldest ready first, within the
 * in-flight limit and the response size budget; undefined when none can be
 * taken. Synchronous, so concurrent receives can never take one message.
 */
export function takeVisible(
  queue: QueueState,
  maxMessages: number,
  visibilityTimeoutMs: number,
  now: number,
): TakenMessages | undefined {
  if (queue.deleted || queue.visibleCount === 0) return undefined;
  let limit = maxMessages;
  // A receive with a visibility timeout of 0 hides nothing, so it needs no room.
  if (visibilityTimeoutMs > 0) limit = Math.min(limit, queue.record.config.maxInFlight - queue.inFlight);
  if (limit <= 0) return undefined;
  const messages: LiveMessage[] = [];
  const spent: LiveMessage[] = [];
  let bytes = 0;
  while (messages.length < limit) {
    const next = queue.nextVisible();
    if (next === undefined) break;
    if (DeadLetters.isSpent(queue, next)) {
      queue.takeNextVisible();
      spent.push(next);
      continue;
    }
    // A checkpoint rides along with the body; its size is not kept, so count the most it can be.
    bytes += next.size + perMessageOverheadBytes + (next.hasCheckpoint ? maxCheckpointBytes : 0);
    if (messages.length > 0 && bytes > receiveResponseBudgetBytes) break;
    queue.takeNextVisible();
    messages.push(next);
  }
  const leaseDeadline = now + visibilityTimeoutMs;
  const readyTimes = messages.map((message) => message.readyAt);
  const ops = messages.map((message) => {
    const fromReadyAt = message.readyAt;
    message.receiveCount++;
    message.epoch++;
    if (message.firstReceiveAt === 0) message.firstReceiveAt = now;
    message.leaseStart = now;
    queue.reschedule(message, leaseDeadline, visibilityTimeoutMs > 0, now);
    return rescheduleOp(queue.record.dataId, fromReadyAt, message);
  });
  return { messages, epochs: messages.map((message) => message.epoch), readyTimes, takenAt: now, leaseDeadline, ops, spent };
}
