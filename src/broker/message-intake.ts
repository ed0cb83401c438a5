import { HoldshelfError } from "../errors/holdshelf-error.js";
import { maxSendBatchBytes } from "../protocol/limits.js";
import type { StoreOp } from "../store/store.js";
import { newMessageId } from "./message-id.js";
import type { QueueState } from "./queue-state.js";
import { checkOutgoing } from "./request-limits.js";
import type { OutgoingMessage } from "./types.js";

/**
 * Checks messages to send against their queue and builds the writes that
 * store them: content and index entry, ready at now + delay. `batchField` is
 * the request field of a batch ("entries"), or "" for a single Send.
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
    const { size, delayMs, typedAttributes } = checkOutgoing(message, config, batchField === "" ? "" : `${batchField}[${index}].`);
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
      size,
      hasCheckpoint: false,
    };
    const content = { body: message.body, attributes: message.attributes ?? {}, typedAttributes };
    return { kind: "putMessage" as const, dataId, entry, content };
  });
  if (totalBytes > maxSendBatchBytes) {
    throw new HoldshelfError("MESSAGE_TOO_LARGE", `the batch is ${totalBytes} bytes; at most ${maxSendBatchBytes}`, {
      violations: [{ field: batchField, description: `at most ${maxSendBatchBytes} bytes in all` }],
    });
  }
  return ops;
}
