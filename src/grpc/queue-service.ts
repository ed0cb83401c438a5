import type { Server } from "@grpc/grpc-js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { AuthGate } from "../auth/auth-gate.js";
import type { QueueServiceBroker } from "../broker/broker-slices.js";
import type { Logger } from "../logging/logger.js";
import { authorizeStream, authorizeQueueService, tokenCaller } from "../service/queue-service-auth.js";
import type { UnaryHandlers } from "../service/unary-handlers.js";
import { toErrorStatus } from "./error-status.js";
import { HeartbeatSession, type HeartbeatCall, type HeartbeatRouting } from "./heartbeat-session.js";
import { createServerServiceDefinition } from "./service-definition.js";
import { serveSubscribe, type SubscribeCall } from "./subscribe-call.js";
import { bridgeUnaryHandlers } from "./unary-bridge.js";

// The protocol's definition (src/protocol/queue-service-definition.ts) with
// the server's request reader: the same paths and messages.
const servedDefinition = createServerServiceDefinition(QueueService);

/**
 * Serves holdshelf.v1.QueueService on a gRPC server: the service layer's
 * handlers (the server routes them to each queue's owner, and hands the same
 * map to the SQS endpoint and the console), and Heartbeat sessions on the
 * broker; with a gate, only to callers its tokens allow.
 */
export function addQueueService(
  server: Pick<Server, "addService">,
  broker: QueueServiceBroker,
  handlers: UnaryHandlers<typeof QueueService>,
  logger: Logger,
  gate: AuthGate | undefined,
  routing: HeartbeatRouting,
): void {
  const logUnexpected = (error: unknown): void => logger.error("unexpected error in a call", { error });
  // A stream's caller is authenticated as it opens (a refusal ends it at once); its requests are then
  // checked for receive on their queue, by the auth file current at each request.
  const openStream = (
    call: HeartbeatCall | SubscribeCall,
    start: (authorizeQueue: ((queue: string) => void) | undefined) => void,
  ): void => {
    let authorizeQueue: ((queue: string) => void) | undefined;
    try {
      if (gate !== undefined) authorizeQueue = authorizeStream(gate, call.metadata);
    } catch (error) {
      call.emit("error", toErrorStatus(error, logUnexpected));
      return;
    }
    start(authorizeQueue);
  };
  server.addService(servedDefinition, {
    // Routing inside authorization: a caller is refused before it could learn which broker serves a queue.
    ...bridgeUnaryHandlers(
      gate === undefined ? handlers : authorizeQueueService(handlers, tokenCaller(gate)),
      logUnexpected,
    ),
    heartbeat: (call: HeartbeatCall) =>
      openStream(call, (authorizeQueue) => {
        new HeartbeatSession(call, broker.streams, logger, logUnexpected, routing, authorizeQueue);
      }),
    subscribe: (call: SubscribeCall) =>
      openStream(call, (authorizeQueue) =>
        serveSubscribe(call, { streams: broker.streams, logger, logUnexpected, routing, authorizeQueue }),
      ),
  });
}
