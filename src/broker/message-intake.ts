import { HoldshelfError } from "../errors/holdshelf-error.js";
import { maxSendBatchBytes } from "../protocol/limits.js";
import type { StoreOp } from "../store/store.js";
import { checkFifoFields } from "./fifo-intake.js";
import { newMessageId } from "./message-id.js";
import type { QueueState } from "./queue-state.js";
import { checkOutgoing } from "./request-limits.js";
import { checkTraceHeader } from "./trace-header.js";
import type { OutgoingMessage } from "./types.js";

/**
 * Checks messages to send against their queue and builds the writes that
 * store them: content and index entry, ready at now + delay. `batchField` is
 * the request field of a batch ("entries"), or "" for a single Send. A FIFO
 * queue's entries carry their group, and their contents the deduplication
 * id; the sender gives them sequence numbers once duplicates are known.
 */
export function intakeMessages(
  queue: QueueState,
  messages: readonly OutgoingMessage[],
  batchField: string,
  now: number,
): Extract<StoreOp, { kind: "putMessage" }>[] {
  const { config, dataId } = queue.record;
  let totalBytes = 0;
  const ops = messages.map((message, index) => {
    const field = batchField === "" ? "" : `${batchField}[${index}].`;
    const fifo = checkFifoFields(message, config, field);
    const { size, delayMs, typedAttributes } = checkOutgoing(message, config, field);
    const traceHeader = checkTraceHeader(message.traceHeader, field);
    totalBytes += size;
    const entry = {
      id: newMessageId(now),
      readyAt: now + delayMs,
      leased: false,
      receiveCount: 0,
      epoch: 0,
      sendTime: now,
      enqueuedAt: now,
      firstReceiveAt: 0,
      leaseStart: 0,
      // The stored size, as receives budget responses by: the trace header too, which max_message_bytes leaves out.
      size: size + (traceHeader?.length ?? 0),
      hasCheckpoint: false,
      group: fifo?.group,
      sequence: fifo === undefined ? undefined : 0,
    };
    const content = {
      body: message.body,
      attributes: message.attributes ?? {},
      typedAttributes,
      deduplicationId: fifo?.deduplicationId,
      traceHeader,
    };
    return { kind: "putMessage" as const, dataId, entry, content };
  });
  if (totalBytes > maxSendBatchBytes) {
    throw new HoldshelfError("MESSAGE_TOO_LARGE", `the batch is ${totalBytes} bytes; at most ${maxSendBatchBytes}`, {
      violations: [{ field: batchField, description: `at most ${maxSendBatchBytes} bytes in all` }],
    });
  }
  return ops;
}
