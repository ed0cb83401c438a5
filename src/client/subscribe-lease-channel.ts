import { LeaseEnding } from "../protocol/lease-state-reason.js";
import type { LeaseChannel, LeaseRequest, LeaseResponse, SplitResponse } from "./lease-channel.js";
import type { SubscribeStream } from "./subscribe-stream.js";
import type { FlowControl, LeaseState, ReceivedMessage } from "./types.js";

/** The part of a SubscribeStream a SubscribeLeaseChannel uses. */
export type SubscribeChannel = Pick<SubscribeStream, "send" | "end" | "cancel" | typeof Symbol.asyncIterator>;

/** What opens a subscription, and where its deliveries go. */
export interface SubscriptionOpening {
  readonly queue: string;
  /** The lease of each delivery; undefined: the queue's visibility timeout. */
  readonly visibilityTimeoutMs: number | undefined;
  /** The flow control the stream opens with (the latest setFlowControl). */
  readonly flowControl: () => FlowControl;
  /** Called with each response's deliveries, before its answers and notices reach the keeper. */
  readonly onDeliveries: (messages: ReceivedMessage[]) => void;
}

/** A Subscribe stream as a LeaseKeeper's channel, which can also change its flow control. */
export interface SubscribeLeaseChannel extends LeaseChannel {
  /** Replaces the stream's flow control (a request the broker does not answer). */
  setFlowControl(flowControl: FlowControl): void;
}

/**
 * A Subscribe stream as a LeaseKeeper's channel: its first request opens the
 * subscription (with release on disconnect, so that a crash hands the work
 * over at once) and carries the renewals of the leases the keeper still
 * holds, so that they count against the new stream's credit; deliveries go
 * to onDeliveries; acks and renewals are answered in one response.
 */
export function subscribeLeaseChannel(stream: SubscribeChannel, opening: SubscriptionOpening): SubscribeLeaseChannel {
  let opened = false;
  return {
    rpc: "Subscribe",
    answersEmptyRequests: false,
    send(request) {
      if (opened) {
        stream.send({ acks: request.acks, leases: request.leases });
        return;
      }
      opened = true;
      stream.send({
        queue: opening.queue,
        visibilityTimeoutMs: opening.visibilityTimeoutMs,
        releaseOnDisconnect: true,
        flowControl: opening.flowControl(),
        acks: request.acks,
        leases: request.leases,
      });
    },
    setFlowControl(flowControl) {
      // Before the opening, the opening request carries it.
      if (opened) stream.send({ flowControl });
    },
    end: () => stream.end(),
    cancel: () => stream.cancel(),
    split: splitSubscribeResponse,
    async *[Symbol.asyncIterator](): AsyncGenerator<LeaseResponse, void, undefined> {
      for await (const response of stream) {
        if (response.messages.length > 0) opening.onDeliveries(response.messages);
        // Deliveries alone too: the keeper learns that the stream works.
        yield response;
      }
    },
  };
}

/**
 * Tells an answer from notices on a Subscribe stream: a notice is a lease
 * state with reason LEASE_EXPIRED, which an answer never carries, so the
 * other states and the ack results are the answer to the request in flight.
 * One that does not match that request (it cannot, from a broker that keeps
 * the contract) answers nothing; the keeper's stall timeout then reopens.
 */
export function splitSubscribeResponse(sent: LeaseRequest | undefined, response: LeaseResponse): SplitResponse {
  const notices: LeaseState[] = [];
  const answered: LeaseState[] = [];
  for (const state of response.leases) (state.reason === LeaseEnding.LEASE_EXPIRED ? notices : answered).push(state);
  const isAnswer =
    sent !== undefined &&
    (response.acks.length > 0 || answered.length > 0) &&
    sameHandles(
      sent.acks,
      response.acks.map((ack) => ack.receiptHandle),
    ) &&
    sameHandles(
      sent.leases.map((lease) => lease.receiptHandle),
      answered.map((state) => state.receiptHandle),
    );
  return { answer: isAnswer ? { acks: response.acks, leases: answered } : undefined, notices };
}

function sameHandles(sent: readonly string[], answered: readonly string[]): boolean {
  return sent.length === answered.length && sent.every((handle, index) => answered[index] === handle);
}
