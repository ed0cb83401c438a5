import { answersRequest } from "../protocol/heartbeat-matching.js";
import type { HeartbeatStream } from "./heartbeat-stream.js";
import type { LeaseChannel, LeaseResponse } from "./lease-channel.js";

/** The part of a HeartbeatStream a LeaseKeeper uses. */
export type HeartbeatChannel = Pick<HeartbeatStream, "send" | "end" | "cancel" | typeof Symbol.asyncIterator>;

/**
 * A Heartbeat stream as a LeaseKeeper's channel: every request names the
 * queue and asks for release on disconnect, and answers are told from
 * notices by the handles they name (see answersRequest). It takes no acks:
 * the receive path deletes with unary calls.
 */
export function heartbeatLeaseChannel(stream: HeartbeatChannel, queue: string): LeaseChannel {
  return {
    rpc: "Heartbeat",
    answersEmptyRequests: true,
    send(request) {
      if (request.acks.length > 0) throw new Error("a Heartbeat stream takes no acks");
      stream.send({ queue, releaseOnDisconnect: true, leases: request.leases });
    },
    end: () => stream.end(),
    cancel: () => stream.cancel(),
    split(sent, response) {
      const answers =
        sent !== undefined &&
        answersRequest(
          sent.leases.map((lease) => lease.receiptHandle),
          response.leases,
        );
      return answers ? { answer: response, notices: [] } : { answer: undefined, notices: response.leases };
    },
    async *[Symbol.asyncIterator](): AsyncGenerator<LeaseResponse, void, undefined> {
      for await (const leases of stream) yield { acks: [], leases };
    },
  };
}
