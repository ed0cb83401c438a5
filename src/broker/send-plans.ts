import type { StoreOp } from "../store/store.js";
import { FifoDeduplication } from "./fifo-deduplication.js";
import { formatMessageId } from "./message-id.js";
import type { QueueState } from "./queue-state.js";
import { formatSequenceNumber } from "./sequence-number.js";
import type { SendResult } from "./types.js";

type PutMessage = Extract<StoreOp, { kind: "putMessage" }>;

/** What a send writes, and what it answers. */
export interface SendPlan {
  /** The messages to store (a FIFO queue's duplicates are not among them). */
  readonly stored: PutMessage[];
  /** Every write to commit: the messages, and a FIFO queue's new deduplication records. */
  readonly ops: StoreOp[];
  /** Deduplication ids this send added to its queue's window (0 for a standard queue). */
  readonly rememberedIds: number;
  /** One per message sent, in order. */
  readonly results: SendResult[];
  /** A FIFO send's wait for the writes its answer depends on; undefined for a standard queue. */
  readonly firstSends: FirstSendWrites | undefined;
}

/** A standard queue's send: every message is stored. */
export function standardSends(intake: PutMessage[]): SendPlan {
  return {
    stored: intake,
    ops: intake,
    rememberedIds: 0,
    results: intake.map((op) => ({ messageId: formatMessageId(op.entry.id), sequenceNumber: "" })),
    firstSends: undefined,
  };
}

/**
 * A FIFO queue's send: a message whose deduplication id was sent within the
 * window (by an earlier call, or earlier in this batch) is not stored, and
 * answers with the first send's id and sequence number; every other one gets
 * the queue's next sequence number, and its id is remembered. Synchronous up
 * to the commit, so two sends of one id at once store it once.
 */
export function fifoSends(queue: QueueState, intake: PutMessage[], now: number): SendPlan {
  const deduplication = queue.deduplication!;
  const { dataId } = queue.record;
  const scope = queue.record.config.fifo!.deduplicationScope;
  const stored: PutMessage[] = [];
  const ops: StoreOp[] = [];
  const results: SendResult[] = [];
  const newKeys: string[] = [];
  const earlierWrites = new Set<Promise<void>>();
  for (const op of intake) {
    const key = FifoDeduplication.keyOf(scope, op.entry.group!, op.content.deduplicationId!);
    const first = deduplication.find(key, now);
    if (first !== undefined) {
      results.push({
        messageId: formatMessageId(first.messageId),
        sequenceNumber: formatSequenceNumber(first.sequence),
      });
      if (first.written !== undefined) earlierWrites.add(first.written);
      continue;
    }
    const sequence = queue.nextSequence(now);
    const put: PutMessage = { ...op, entry: { ...op.entry, sequence } };
    stored.push(put);
    ops.push(put, deduplication.remember(key, op.entry.id, sequence, dataId, now));
    newKeys.push(key);
    results.push({ messageId: formatMessageId(op.entry.id), sequenceNumber: formatSequenceNumber(sequence) });
  }
  const storedIds = new Set(stored.map((op) => op.entry.id));
  return {
    stored,
    ops,
    rememberedIds: newKeys.length,
    results,
    firstSends: {
      abandon() {
        deduplication.forget(newKeys, storedIds);
      },
      async awaitWritten(written) {
        deduplication.writing(newKeys, written);
        try {
          await written;
        } catch (error) {
          // Nothing was stored: a retry of these ids must store them.
          deduplication.forget(newKeys, storedIds);
          throw error;
        }
        // A duplicate answers only once the send it repeats is durable (and fails if that one failed).
        await Promise.all(earlierWrites);
      },
    },
  };
}

/** Waits for a FIFO send's own write and for the writes of the first sends it repeats. */
export interface FirstSendWrites {
  awaitWritten(written: Promise<void>): Promise<void>;
  /** Forgets the ids this send remembered, when it is refused before its write starts. */
  abandon(): void;
}
