import type { SubscribeChannel } from "../../src/client/subscribe-lease-channel.js";
import type { ReceivedMessage, SubscribeRequest, SubscribeResponse } from "../../src/client/types.js";

/** A Subscribe stream the test plays the broker of: it sees each request and pushes each response. */
export class ScriptedSubscribe implements SubscribeChannel {
  readonly sent: SubscribeRequest[] = [];
  halfClosed = false;
  cancelled = false;
  private readonly responses: SubscribeResponse[] = [];
  private failure: unknown;
  private done = false;
  private wake: (() => void) | undefined;

  send(request: SubscribeRequest): void {
    this.sent.push(request);
  }

  end(): void {
    this.halfClosed = true;
  }

  cancel(): void {
    this.cancelled = true;
  }

  /** Delivers a response; fields left out are empty. */
  push(response: Partial<SubscribeResponse>): void {
    this.responses.push({ messages: [], acks: [], leases: [], ...response });
    this.poke();
  }

  /** Ends the stream as the broker would after a half-close. */
  finish(): void {
    this.done = true;
    this.poke();
  }

  /** Ends the stream with an error. */
  fail(error: unknown): void {
    this.failure = error;
    this.poke();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SubscribeResponse, void, undefined> {
    for (;;) {
      const next = this.responses.shift();
      if (next !== undefined) yield next;
      else if (this.failure !== undefined) throw this.failure;
      else if (this.done) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
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
