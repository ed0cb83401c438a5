import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { SubscribeRequest, SubscribeResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { LeaseStreamOperations, SubscribeOperations } from "../broker/broker-slices.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import type { Logger } from "../logging/logger.js";
import type { PreEncoded } from "../service/pre-encoded.js";
import { SubscribeSession, type SubscribeChannel } from "../service/subscribe-session.js";
import { toErrorStatus } from "./error-status.js";
import { afterResetGrace, endedCleanly } from "./half-close-grace.js";
import { OwnerSubscribeStream } from "./forwarding/owner-subscribe-stream.js";
import { isForwarded } from "./forwarding/peer-metadata.js";
import { notServedHere } from "./forwarding/queue-moving.js";
import type { HeartbeatRouting } from "./heartbeat-session.js";
import { MalformedRequest } from "./service-definition.js";
import type { SubscribeStreamTarget } from "./subscribe-stream-target.js";

/** A Subscribe call as grpc-js hands it to the server. */
export type SubscribeCall = ServerDuplexStream<
  SubscribeRequest | MalformedRequest,
  SubscribeResponse | PreEncoded<SubscribeResponse>
>;

/** What a Subscribe call is served with. */
export interface SubscribeCallOptions {
  readonly streams: SubscribeOperations & Pick<LeaseStreamOperations, "open">;
  readonly logger: Logger;
  readonly logUnexpected: (error: unknown) => void;
  readonly routing: HeartbeatRouting;
  /** Throws PERMISSION_DENIED (or a token reason) when the caller may not receive from the queue. */
  readonly authorizeQueue?: ((queue: string) => void) | undefined;
}

/**
 * Serves one Subscribe call: its first request names the queue, and the
 * call goes to a SubscribeSession here when this broker serves the queue,
 * or whole to the queue's owner (cluster mode). A call another broker
 * passed here is never passed on again.
 */
export function serveSubscribe(call: SubscribeCall, options: SubscribeCallOptions): void {
  let target: SubscribeStreamTarget | undefined;
  let failed = false;
  // Before a target, or from the owner's stream: nothing here holds leases.
  const fail = (error: unknown): void => {
    if (failed) return;
    failed = true;
    call.emit("error", toErrorStatus(error, options.logUnexpected));
  };
  const channel = grpcChannel(call, options.logUnexpected, () => {
    failed = true;
  });
  call.on("data", (request: SubscribeRequest | MalformedRequest) => {
    if (failed) return;
    if (request instanceof MalformedRequest) {
      if (target === undefined) return fail(invalidArgument("request", request.description));
      return target.malformed(request.description);
    }
    if (target === undefined) {
      try {
        target = open(call, request, channel, options, fail);
      } catch (error) {
        return fail(error);
      }
    }
    target.request(request);
  });
  call.on("end", () => {
    if (target === undefined) call.end();
    else target.halfClose();
  });
  call.on("drain", () => target?.drained());
  call.on("cancelled", () => target?.broken());
}

/** The target of a call whose first request is `first`: routed by its queue, after the caller is authorized. */
function open(
  call: SubscribeCall,
  first: SubscribeRequest,
  channel: SubscribeChannel,
  options: SubscribeCallOptions,
  fail: (error: unknown) => void,
): SubscribeStreamTarget {
  const { router, peers } = options.routing;
  // Authorized before routing: a refusal says nothing of where a queue is served.
  if (first.queue !== "") options.authorizeQueue?.(first.queue);
  const route = first.queue === "" ? undefined : router.route(first.queue);
  if (route === undefined || route.kind === "local") {
    const session = new SubscribeSession(channel, {
      streams: options.streams,
      logger: options.logger,
      authorizeQueue: options.authorizeQueue,
    });
    return {
      request: (request) => session.request(request),
      malformed: (description) => session.malformed(description),
      halfClose: () => session.halfClose(),
      drained: () => session.drained(),
      broken: () => session.broken(),
    };
  }
  if (route.kind === "unavailable") throw route.error;
  if (isForwarded(call.metadata)) throw notServedHere(first.queue);
  return new OwnerSubscribeStream(call, route.owner, call.metadata, {
    peers,
    streams: options.streams,
    selfNodeId: router.self.nodeId,
    fail,
  });
}

/** A grpc-js call as a session's channel; `ended` is told when the session ends the call itself. */
function grpcChannel(
  call: SubscribeCall,
  logUnexpected: (error: unknown) => void,
  ended: () => void,
): SubscribeChannel {
  return {
    write: (response, sent) => call.write(response, sent === undefined ? undefined : () => sent()),
    pause: () => call.pause(),
    resume: () => call.resume(),
    halfCloseWasClean: () => new Promise((resolve) => afterResetGrace(() => resolve(endedCleanly(call)))),
    end: () => {
      ended();
      call.end();
    },
    fail: (error) => {
      ended();
      call.emit("error", toErrorStatus(error, logUnexpected));
    },
    peer: call.getPeer(),
  };
}
