import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { QueueState, LiveMessage } from "./queue-state.js";
import type { ReceiptHandleClaim, ReceiptHandles } from "./receipt-handles.js";

/**
 * The one place a receipt handle is checked against the message it names.
 * Returns the message if the handle names its current delivery, undefined if
 * the message no longer exists. Throws RECEIPT_HANDLE_INVALID for a handle
 * that is malformed, forged or of another queue, and LEASE_SUPERSEDED for one
 * that a later delivery replaced: a consumer that lost its lease can never
 * act on another consumer's delivery.
 */
export function findLeasedMessage(
  queue: QueueState,
  handles: ReceiptHandles,
  receiptHandle: string,
): LiveMessage | undefined {
  return findDelivery(queue, handles, receiptHandle).message;
}

/**
 * findLeasedMessage, with the delivery the handle names, which a Delete
 * needs when the message no longer exists, to say what became of it.
 */
export function findDelivery(
  queue: QueueState,
  handles: ReceiptHandles,
  receiptHandle: string,
): ReceiptHandleClaim & { readonly message: LiveMessage | undefined } {
  const claim = handles.verify(receiptHandle, queue.record.queueId);
  const message = queue.get(claim.messageId);
  if (message === undefined) return { ...claim, message };
  if (claim.epoch < message.epoch) {
    throw new HoldshelfError("LEASE_SUPERSEDED", "the message was received again since this receipt handle was issued");
  }
  if (claim.epoch > message.epoch) {
    // Signed by us, yet ahead of every delivery made: not a handle we issued for this message.
    throw new HoldshelfError("RECEIPT_HANDLE_INVALID", "receipt handle does not match any delivery of its message", {
      violations: [{ field: "receipt_handle", description: "does not match any delivery" }],
    });
  }
  return { ...claim, message };
}
