import { HoldshelfError } from "../errors/holdshelf-error.js";
import { maxCheckpointBytes } from "../protocol/limits.js";
import type { Store, StoreOp } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { BackgroundWork } from "./background-work.js";
import type { BrokerEvents } from "./broker-events.js";
import type { CommitAndServe } from "./commit-and-serve.js";
import type { DeadLetters } from "./dead-letters.js";
import type { LeaseStream, LeaseTracking } from "./lease-tracking.js";
import { messageView } from "./message-view.js";
import { isSpent } from "./queue-config.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import type { ReceiptHandles } from "./receipt-handles.js";
import { perMessageOverheadBytes, receiveResponseBudgetBytes } from "./request-limits.js";
import type { Delivery } from "./types.js";
import type { WaitingReceives } from "./waiting-receives.js";

/** What the receive rules work on: parts of one load of the broker's memory. */
export interface ReceiveRulesOptions {
  readonly clock: Clock;
  readonly store: Pick<Store, "commit" | "readMessages">;
  readonly handles: ReceiptHandles;
  readonly tracking: LeaseTracking;
  readonly waiting: WaitingReceives;
  readonly deadLetters: DeadLetters;
  readonly background: BackgroundWork;
  /** Makes due messages visible in a queue and serves its waiting receives (Maintenance.advance). */
  readonly advance: (queue: QueueState) => void;
  readonly commitAndServe: CommitAndServe;
  readonly events: BrokerEvents;
}

/** A Receive's options, resolved and checked against its queue. */
export interface ReceiveRequest {
  readonly maxMessages: number;
  readonly visibilityTimeoutMs: number;
  readonly waitTimeMs: number;
  /** False once the broker is closing: a receive that finds nothing answers at once. */
  readonly mayWait: boolean;
  /** A Subscribe stream's take: the stream then holds the leases, within this many bytes (at least one message). */
  readonly holder?: { readonly stream: LeaseStream; readonly maxBytes: number } | undefined;
}

/** The rules of a Receive, from the take to the deliveries. */
export interface ReceiveRules {
  /**
   * Leases up to `maxMessages` visible messages, waiting for them if asked
   * to, and answers once the leases are durable. Throws TOO_MANY_IN_FLIGHT
   * when a receive that may not wait finds the queue at its max_in_flight.
   */
  receive(queue: QueueState, request: ReceiveRequest, signal: AbortSignal | undefined): Promise<Delivery[]>;
}

/** Messages a receive has leased in memory, and the pending write that makes the leases durable. */
interface Taken {
  readonly messages: LiveMessage[];
  /** The delivery each lease belongs to, to tell it from a later one. */
  readonly epochs: number[];
  /** When each message had become visible, before this receive took it. */
  readonly readyTimes: number[];
  /** When this receive took them. */
  readonly takenAt: number;
  readonly leaseDeadline: number;
  readonly written: Promise<void>;
  /** Spent messages this answer delivers for the last time, to dead-letter once read. */
  readonly deadLetterAfter: LiveMessage[];
}

/**
 * The receive path in one place: take visible messages in memory, write
 * their leases at once, wait for that write, read the bodies, and answer; a
 * caller that left meanwhile gets nothing and its messages go back. Messages
 * that may not be delivered again leave for the dead-letter queue here too.
 */
export function createReceiveRules(options: ReceiveRulesOptions): ReceiveRules {
  const { clock, store, handles, tracking, waiting, deadLetters, background, advance, commitAndServe, events } =
    options;

  /** Removes messages from the queue's memory and from any stream's tracking. */
  const setAside = (queue: QueueState, messages: readonly LiveMessage[]): void => {
    for (const message of messages) {
      queue.remove(message);
      tracking.untrack(queue, message.id);
    }
  };

  /** Takes messages out of memory and hands them to the dead-letter queue in the background. */
  const deadLetterNow = (queue: QueueState, messages: readonly LiveMessage[]): void => {
    setAside(queue, messages);
    background.start(deadLetters.deadLetter(queue, messages));
  };

  /** Leases visible messages for a receive and starts the write that makes the leases durable. */
  const take = (
    queue: QueueState,
    maxMessages: number,
    visibilityTimeoutMs: number,
    maxBytes: number,
  ): Taken | undefined => {
    const now = clock.now();
    const found = takeVisible(queue, maxMessages, visibilityTimeoutMs, maxBytes);
    if (found === undefined) return undefined;
    // Visible yet spent: a crash or a policy change came between their last
    // lease and their move. Never delivered again, they leave now.
    if (found.spent.length > 0) deadLetterNow(queue, found.spent);
    const { messages } = found;
    if (messages.length === 0) return undefined;
    const leaseDeadline = now + visibilityTimeoutMs;
    const readyTimes = messages.map((message) => message.readyAt);
    const ops: StoreOp[] = messages.map((message) => {
      message.receiveCount++;
      message.epoch++;
      if (message.firstReceiveAt === 0) message.firstReceiveAt = now;
      message.leaseStart = now;
      return queue.reschedule(message, leaseDeadline, visibilityTimeoutMs > 0, now);
    });
    // Written at once, so that the disk sees changes in the order memory did.
    const written = store.commit(ops);
    // A receive that hides nothing ends its leases at once: messages on their
    // last allowed delivery leave for the dead-letter queue, but only once
    // this answer has read their bodies. Until then nobody else sees them.
    const deadLetterAfter =
      visibilityTimeoutMs === 0 ? messages.filter((message) => isSpent(queue.record.config, message.receiveCount)) : [];
    setAside(queue, deadLetterAfter);
    const epochs = messages.map((message) => message.epoch);
    return { messages, epochs, readyTimes, takenAt: now, leaseDeadline, written, deadLetterAfter };
  };

  /** Makes a take durable, reads the bodies, and builds the deliveries. */
  const deliver = async (
    queue: QueueState,
    taken: Taken,
    signal: AbortSignal | undefined,
    holder: LeaseStream | undefined,
  ): Promise<Delivery[]> => {
    const { dataId, queueId } = queue.record;
    // Read only once the lease is written: batches land in call order, so a
    // checkpoint saved with the release that freed a message is on disk by then.
    await taken.written;
    const contents = await store.readMessages(dataId, taken.messages);
    if (taken.deadLetterAfter.length > 0) background.start(deadLetters.deadLetter(queue, taken.deadLetterAfter));
    if (signal?.aborted) {
      await releaseTaken(queue, taken);
      return [];
    }
    const deliveries: Delivery[] = [];
    taken.messages.forEach((message, index) => {
      const content = contents[index];
      if (content === undefined) return; // purged while the lease was being written
      const epoch = taken.epochs[index]!;
      const queueWaitMs = message.receiveCount === 1 ? taken.takenAt - taken.readyTimes[index]! : undefined;
      events.delivered(queue.record.name, message.receiveCount, queueWaitMs);
      const receiptHandle = handles.issue(queueId, message.id, epoch);
      // Held before the answer leaves: an expiry or a release on disconnect can never miss it.
      if (holder !== undefined) {
        tracking.track({ stream: holder, queue, messageId: message.id, epoch, receiptHandle, bytes: message.size });
      }
      deliveries.push({
        ...messageView(message, content),
        receiptHandle,
        leaseDeadline: taken.leaseDeadline,
        checkpoint: content.checkpoint,
      });
    });
    return deliveries;
  };

  /** Gives back the messages of a receive whose caller left before the answer: they become visible again. */
  const releaseTaken = async (queue: QueueState, taken: Taken): Promise<void> => {
    const now = clock.now();
    const ops: StoreOp[] = [];
    taken.messages.forEach((takenMessage, index) => {
      // Looked up again: the copies taken are from before the awaits.
      const message = queue.get(takenMessage.id);
      if (message === undefined || message.epoch !== taken.epochs[index]) return;
      // Nobody saw this delivery: it does not count toward max_receive_count.
      message.receiveCount--;
      if (message.receiveCount === 0) message.firstReceiveAt = 0;
      ops.push(queue.reschedule(message, now, false, now));
    });
    await commitAndServe(queue, ops);
  };

  return {
    async receive(queue, { maxMessages, visibilityTimeoutMs, waitTimeMs, mayWait, holder }, signal) {
      const name = queue.record.name;
      // Leases that ran out are visible before anything is taken; see Maintenance.advance.
      advance(queue);
      const maxBytes = Math.min(holder?.maxBytes ?? Infinity, receiveResponseBudgetBytes);
      const attempt = (): Taken | undefined => take(queue, maxMessages, visibilityTimeoutMs, maxBytes);
      let taken = attempt();
      const atInFlightLimit = visibilityTimeoutMs > 0 && queue.inFlight >= queue.record.config.maxInFlight;
      if (taken === undefined && waitTimeMs === 0 && atInFlightLimit) {
        throw new HoldshelfError(
          "TOO_MANY_IN_FLIGHT",
          `queue "${name}" has ${queue.inFlight} messages in flight, its max_in_flight`,
        );
      }
      if (taken === undefined && waitTimeMs > 0 && mayWait)
        taken = await waiting.wait(queue, attempt, waitTimeMs, signal);
      if (taken === undefined) {
        // A stream's wait ends empty only as it closes: that is no receive.
        if (!signal?.aborted && holder === undefined) events.emptyReceive(name);
        return [];
      }
      return deliver(queue, taken, signal, holder?.stream);
    },
  };
}

/**
 * Takes visible messages out of a queue's heaps, oldest ready first (a FIFO
 * queue's: group by group, see QueueState.nextVisible), within the in-flight
 * limit and `maxBytes` (at least one message); undefined when none can
 * be taken. Spent messages met on the way are taken too, apart, never to be
 * delivered. Synchronous, so concurrent receives can never take one message;
 * the caller must reschedule every message taken.
 */
function takeVisible(
  queue: QueueState,
  maxMessages: number,
  visibilityTimeoutMs: number,
  maxBytes: number,
): { messages: LiveMessage[]; spent: LiveMessage[] } | undefined {
  if (queue.deleted || queue.visibleCount === 0) return undefined;
  let limit = maxMessages;
  // A receive with a visibility timeout of 0 hides nothing, so it needs no room.
  if (visibilityTimeoutMs > 0) limit = Math.min(limit, queue.record.config.maxInFlight - queue.inFlight);
  if (limit <= 0) return undefined;
  const messages: LiveMessage[] = [];
  const spent: LiveMessage[] = [];
  let bytes = 0;
  // A FIFO queue goes on with the group of the message taken last (see QueueState.nextVisible).
  let taken: LiveMessage | undefined;
  while (messages.length < limit) {
    const next = queue.nextVisible(taken);
    if (next === undefined) break;
    if (isSpent(queue.record.config, next.receiveCount)) {
      queue.take(next);
      spent.push((taken = next));
      continue;
    }
    // A checkpoint rides along with the body; its size is not kept, so count the most it can be.
    bytes += next.size + perMessageOverheadBytes + (next.hasCheckpoint ? maxCheckpointBytes : 0);
    if (messages.length > 0 && bytes > maxBytes) break;
    queue.take(next);
    messages.push((taken = next));
  }
  return { messages, spent };
}
