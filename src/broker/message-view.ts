import type { MessageContent, ScheduleEntry } from "../store/store.js";
import { formatMessageId } from "./message-id.js";
import { formatSequenceNumber } from "./sequence-number.js";
import type { Delivery, FifoDelivery, PeekedMessage } from "./types.js";

/** What a delivery and a peek both show of a message. */
export type MessageView = Pick<
  Delivery & PeekedMessage,
  | "messageId"
  | "body"
  | "attributes"
  | "typedAttributes"
  | "receiveCount"
  | "sendTime"
  | "firstReceiveTime"
  | "deadLetter"
  | "deadLetteredTime"
  | "fifo"
  | "traceHeader"
>;

/** A message as a delivery or a peek shows it: its schedule entry's counters and times, and its stored content. */
export function messageView(message: ScheduleEntry, content: MessageContent): MessageView {
  return {
    messageId: formatMessageId(message.id),
    body: content.body,
    attributes: content.attributes,
    typedAttributes: content.typedAttributes,
    receiveCount: message.receiveCount,
    sendTime: message.sendTime,
    firstReceiveTime: message.firstReceiveAt,
    deadLetter: content.deadLetter,
    // A dead-letter move is the message's arrival in the dead-letter queue: no stored field of its own.
    deadLetteredTime: content.deadLetter === undefined ? undefined : message.enqueuedAt,
    fifo: fifoDelivery(message, content),
    traceHeader: content.traceHeader,
  };
}

/** What a delivery or a peek shows of a FIFO queue's message; undefined for a standard queue's. */
function fifoDelivery(message: ScheduleEntry, content: MessageContent): FifoDelivery | undefined {
  if (message.group === undefined) return undefined;
  return {
    messageGroupId: message.group,
    sequenceNumber: formatSequenceNumber(message.sequence ?? 0),
    deduplicationId: content.deduplicationId ?? "",
  };
}
