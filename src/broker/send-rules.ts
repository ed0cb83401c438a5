import type { Store } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { BrokerEvents } from "./broker-events.js";
import type { DeduplicationIdBudget, StoredMessageBudget } from "./broker-limits.js";
import { intakeMessages } from "./message-intake.js";
import type { QueueState } from "./queue-state.js";
import { fifoSends, standardSends } from "./send-plans.js";
import type { OutgoingMessage, SendResult } from "./types.js";

/** What the send rules work on: parts of one load of the broker's memory. */
export interface SendRulesOptions {
  readonly clock: Clock;
  readonly store: Pick<Store, "commit">;
  readonly storedBudget: StoredMessageBudget;
  readonly deduplicationBudget: DeduplicationIdBudget;
  /** Offers a queue's new messages to its waiting receives and arms its timer (Maintenance.advance). */
  readonly advance: (queue: QueueState) => void;
  readonly events: BrokerEvents;
}

/** The rules of a Send, from the checks to the messages in memory. */
export interface SendRules {
  /**
   * Stores messages in a queue in one atomic batch (a FIFO queue's
   * duplicates aside: they answer with the first send's result), and
   * answers once they are durable, with a result per message in order.
   * `batchField` is the request field of a batch ("entries"), or "" for a
   * single Send. BROKER_FULL when the broker's capacity would be exceeded.
   */
  send(queue: QueueState, messages: readonly OutgoingMessage[], batchField: string): Promise<SendResult[]>;
}

/**
 * The send path in one place, the mirror of ReceiveRules: check the
 * messages and build their writes (message-intake.ts), plan them (a FIFO
 * queue's duplicates and sequence numbers, send-plans.ts), reserve room in
 * the broker's budgets, commit, and only once that is durable show the
 * messages in memory.
 */
export function createSendRules(options: SendRulesOptions): SendRules {
  const { clock, store, storedBudget, deduplicationBudget, advance, events } = options;
  return {
    async send(queue, messages, batchField) {
      const dataId = queue.record.dataId;
      const now = clock.now();
      const intake = intakeMessages(queue, messages, batchField, now);
      const { stored, ops, rememberedIds, results, firstSends } = queue.fifo
        ? fifoSends(queue, intake, now)
        : standardSends(intake);
      let release: () => void;
      try {
        deduplicationBudget.check(rememberedIds);
        release = storedBudget.reserve(stored.length);
      } catch (error) {
        // Refused before anything was written (BROKER_FULL): the ids this send remembered must not answer its retry.
        firstSends?.abandon();
        throw error;
      }
      try {
        const written = store.commit(ops);
        await (firstSends === undefined ? written : firstSends.awaitWritten(written));
      } finally {
        // Adopted below in the same turn, so the queue counts them from here on.
        release();
      }
      events.sent(queue.record.name, stored.length, results.length - stored.length);
      // Only now, durable, may the messages be seen. A purge or delete that
      // committed meanwhile removed them, as if they were sent just before it.
      if (!queue.deleted && queue.record.dataId === dataId && stored.length > 0) {
        const now = clock.now();
        for (const op of stored) queue.add(op.entry, now);
        advance(queue);
      }
      return results;
    },
  };
}
