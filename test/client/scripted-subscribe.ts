import type { SubscribeChannel } from "../../src/client/subscribe-lease-channel.js";
import type { ReceivedMessage, SubscribeRequest, SubscribeResponse } from "../../src/client/types.js";
import { ScriptedCall } from "./scripted-call.js";

/** A Subscribe stream the test plays the broker of: it sees each request and pushes each response. */
export class ScriptedSubscribe extends ScriptedCall<SubscribeRequest, SubscribeResponse> implements SubscribeChannel {
  /** Delivers a response; fields left out are empty. */
  push(response: Partial<SubscribeResponse>): void {
    this.respond({ messages: [], acks: [], leases: [], ...response });
  }
}

/** A delivery with this receipt handle. */
export const delivery = (receiptHandle: string, messageGroupId?: string): ReceivedMessage => ({
  messageId: `id-${receiptHandle}`,
  receiptHandle,
  body: new Uint8Array(),
  attributes: {},
  typedAttributes: {},
  receiveCount: 1,
  sendTime: new Date(0),
  firstReceiveTime: new Date(0),
  leaseDeadline: new Date(0),
  ...(messageGroupId === undefined ? {} : { messageGroupId }),
});
