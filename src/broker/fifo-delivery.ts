import type { MessageContent, ScheduleEntry } from "../store/store.js";
import { formatSequenceNumber } from "./sequence-number.js";
import type { FifoDelivery } from "./types.js";

/** What a delivery or a peek shows of a FIFO queue's message; undefined for a standard queue's. */
export function fifoDelivery(message: ScheduleEntry, content: MessageContent): FifoDelivery | undefined {
  if (message.group === undefined) return undefined;
  return {
    messageGroupId: message.group,
    sequenceNumber: formatSequenceNumber(message.sequence ?? 0),
    deduplicationId: content.deduplicationId ?? "",
  };
}
