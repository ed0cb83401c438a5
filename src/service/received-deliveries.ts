import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ReceivedMessageSchema, type ReceivedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import { ReceiveResponseSchema, type ReceiveResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { Delivery } from "../broker/types.js";
import { PreEncoded } from "./pre-encoded.js";
import { encodeReceiveResponse } from "./receive-response-encoding.js";
import { typedAttributesToWire } from "./wire-convert.js";

/**
 * Receive's answer from this broker's own rules. The gRPC wire sends its
 * bytes, written by the hand-written encoder when first asked for; the HTTP
 * wires in the same process (QueueCalls) take message() instead, and so
 * skip an encode and a decode per receive. A receive another broker served
 * (cluster mode) arrives as plain PreEncoded bytes and is decoded.
 */
export class ReceivedDeliveries extends PreEncoded<ReceiveResponse> {
  constructor(readonly deliveries: readonly Delivery[]) {
    super(() => encodeReceiveResponse(deliveries).bytes);
  }

  /** The answer as protobuf-es's message: the one its bytes encode. */
  message(): ReceiveResponse {
    return create(ReceiveResponseSchema, { messages: this.deliveries.map(receivedMessageToWire) });
  }
}

function receivedMessageToWire(delivery: Delivery): ReceivedMessage {
  return create(ReceivedMessageSchema, {
    messageId: delivery.messageId,
    receiptHandle: delivery.receiptHandle,
    body: delivery.body,
    attributes: { ...delivery.attributes },
    receiveCount: delivery.receiveCount,
    sendTime: timestampFromMs(delivery.sendTime),
    firstReceiveTime: timestampFromMs(delivery.firstReceiveTime),
    leaseDeadline: timestampFromMs(delivery.leaseDeadline),
    ...(delivery.checkpoint === undefined ? {} : { checkpoint: delivery.checkpoint }),
    deadLetterSourceQueue: delivery.deadLetter?.sourceQueue ?? "",
    deadLetterReason: delivery.deadLetter?.reason ?? "",
    typedAttributes: typedAttributesToWire(delivery.typedAttributes),
    ...delivery.fifo,
    traceHeader: delivery.traceHeader ?? "",
    ...(delivery.deadLetteredTime === undefined
      ? {}
      : { deadLetteredTime: timestampFromMs(delivery.deadLetteredTime) }),
  });
}
