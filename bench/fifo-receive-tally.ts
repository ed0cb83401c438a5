import type { ReceivedMessage } from "../gen/holdshelf/v1/message_pb.js";

/** What the Receives of a FIFO pipeline run returned. */
export interface FifoReceiveCounts {
  /** Receives that returned messages, and those that returned none (a long poll that found no group ready). */
  readonly receives: number;
  readonly emptyReceives: number;
  readonly messages: number;
  /** Distinct groups in each non-empty Receive, summed (0 on a standard queue). */
  readonly groupSpans: number;
  /** Messages that came at or before one already received of their group: 0, or FIFO is broken. */
  readonly outOfOrder: number;
}

/** Counts a pipeline's Receives (PipelineOptions.onReceive) and, on a FIFO queue, checks each group's order. */
export interface FifoReceiveTally {
  readonly onReceive: (messages: readonly ReceivedMessage[]) => void;
  counts(): FifoReceiveCounts;
}

/**
 * A tally for one run. Order is checked in the order Receives return in
 * this process, which is delivery order within a group: a group's next
 * messages are delivered only after the DeleteBatch that follows the
 * callback for its previous ones.
 */
export function createFifoReceiveTally(): FifoReceiveTally {
  // Sequence numbers are zero-padded to 20 digits: comparing the text compares the numbers.
  const lastSequence = new Map<string, string>();
  let receives = 0;
  let emptyReceives = 0;
  let messages = 0;
  let groupSpans = 0;
  let outOfOrder = 0;
  return {
    onReceive(received) {
      if (received.length === 0) return void emptyReceives++;
      receives++;
      messages += received.length;
      const groups = new Set<string>();
      for (const { messageGroupId, sequenceNumber } of received) {
        if (messageGroupId === "") continue; // a standard queue's: no group, no order to check
        groups.add(messageGroupId);
        const last = lastSequence.get(messageGroupId);
        if (last !== undefined && sequenceNumber <= last) outOfOrder++;
        else lastSequence.set(messageGroupId, sequenceNumber);
      }
      groupSpans += groups.size;
    },
    counts: () => ({ receives, emptyReceives, messages, groupSpans, outOfOrder }),
  };
}
