import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { MessageState, PeekedMessageSchema, type PeekedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import { PeekMessagesResponseSchema, type PeekMessagesResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { PeekedMessage as BrokerPeekedMessage, PeekPage } from "../broker/types.js";
import { typedAttributesToWire } from "./wire-convert.js";

/**
 * A page of PeekMessages as the wire shows it. Built with protobuf-es rather
 * than written by hand as Receive's answer is: an operator's page of at most
 * 100 messages is not a hot path.
 */
export function peekPageToWire(page: PeekPage): PeekMessagesResponse {
  return create(PeekMessagesResponseSchema, {
    messages: page.messages.map(peekedMessageToWire),
    nextPageToken: page.nextPageToken,
  });
}

function peekedMessageToWire(message: BrokerPeekedMessage): PeekedMessage {
  return create(PeekedMessageSchema, {
    messageId: message.messageId,
    body: message.body,
    attributes: { ...message.attributes },
    typedAttributes: typedAttributesToWire(message.typedAttributes),
    receiveCount: message.receiveCount,
    sendTime: timestampFromMs(message.sendTime),
    // 0 is the broker's "never delivered": unset on the wire.
    ...(message.firstReceiveTime === 0 ? {} : { firstReceiveTime: timestampFromMs(message.firstReceiveTime) }),
    state: MessageState[message.state],
    ...(message.leaseDeadline === undefined ? {} : { leaseDeadline: timestampFromMs(message.leaseDeadline) }),
    ...(message.visibleTime === undefined ? {} : { visibleTime: timestampFromMs(message.visibleTime) }),
    checkpointSize: message.checkpointSize,
    deadLetterSourceQueue: message.deadLetter?.sourceQueue ?? "",
    deadLetterReason: message.deadLetter?.reason ?? "",
    ...message.fifo,
    traceHeader: message.traceHeader ?? "",
    ...(message.deadLetteredTime === undefined ? {} : { deadLetteredTime: timestampFromMs(message.deadLetteredTime) }),
  });
}
