import { MessageState, type PeekedMessage, type TypedAttributeValue } from "../../gen/holdshelf/v1/message_pb.js";
import { msOf } from "./console-views.js";

/** A typed attribute as the console shows it: its value as text, or base64 for binary. */
interface TypedAttributeView {
  readonly dataType: string;
  readonly stringValue?: string;
  readonly binaryValue?: string;
}

/** A dead letter's kept history; times in epoch ms, null where the broker did not keep it (a message dead-lettered before 0.2.0). */
interface DeadLetterView {
  readonly sourceQueue: string;
  readonly reason: string;
  readonly deadLetteredAt: number | null;
  readonly receiveCount: number;
  readonly firstReceiveTime: number | null;
}

const stateNames: Record<number, string> = {
  [MessageState.VISIBLE]: "visible",
  [MessageState.IN_FLIGHT]: "in_flight",
  [MessageState.DELAYED]: "delayed",
};

// Bodies that are not UTF-8 are shown as hex; this decoder says which those are.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A peeked message as the message browser shows it: the body in base64, and as text when it is UTF-8. */
export function peekedMessageView(message: PeekedMessage): object {
  return {
    messageId: message.messageId,
    body: Buffer.from(message.body).toString("base64"),
    bodyText: utf8OrNull(message.body),
    attributes: message.attributes,
    typedAttributes: Object.fromEntries(
      Object.entries(message.typedAttributes).map(([name, value]) => [name, typedAttributeView(value)]),
    ),
    receiveCount: message.receiveCount,
    sendTime: msOf(message.sendTime),
    firstReceiveTime: msOf(message.firstReceiveTime),
    state: stateNames[message.state] ?? "unknown",
    leaseDeadline: msOf(message.leaseDeadline),
    visibleTime: msOf(message.visibleTime),
    checkpointSize: message.checkpointSize,
    deadLetterSourceQueue: message.deadLetterSourceQueue === "" ? null : message.deadLetterSourceQueue,
    deadLetterReason: message.deadLetterReason === "" ? null : message.deadLetterReason,
    deadLetter: deadLetterView(message),
    // FIFO queues only; null on a standard queue's messages.
    messageGroupId: message.messageGroupId === "" ? null : message.messageGroupId,
    sequenceNumber: message.sequenceNumber === "" ? null : message.sequenceNumber,
    deduplicationId: message.deduplicationId === "" ? null : message.deduplicationId,
    // The trace header it was sent with (SQS's AWSTraceHeader); null when none.
    traceHeader: message.traceHeader === "" ? null : message.traceHeader,
  };
}

/**
 * A dead letter's history, kept across its move (null for a message that was
 * never dead-lettered): where it came from and why, when it moved, and its
 * receive count and first receive in the queue it came from.
 */
function deadLetterView(message: PeekedMessage): DeadLetterView | null {
  if (message.deadLetterSourceQueue === "") return null;
  return {
    sourceQueue: message.deadLetterSourceQueue,
    reason: message.deadLetterReason,
    deadLetteredAt: msOf(message.deadLetteredTime),
    // Kept across the dead-letter move (and counting on here), as Amazon SQS keeps them.
    receiveCount: message.receiveCount,
    firstReceiveTime: msOf(message.firstReceiveTime),
  };
}

function typedAttributeView(value: TypedAttributeValue): TypedAttributeView {
  const { dataType } = value;
  if (value.value.case === "binaryValue")
    return { dataType, binaryValue: Buffer.from(value.value.value).toString("base64") };
  return { dataType, stringValue: value.value.case === "stringValue" ? value.value.value : "" };
}

function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}
