import type { Server } from "@grpc/grpc-js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { AuthGate } from "../auth/auth-gate.js";
import { authorizeHeartbeat, authorizeQueueService } from "../auth/queue-service-auth.js";
import type { Broker } from "../broker/broker.js";
import type { QueueRouter } from "../cluster/queue-router.js";
import type { Logger } from "../logging/logger.js";
import { toErrorStatus } from "./error-status.js";
import { HeartbeatSession, type HeartbeatCall } from "./heartbeat-session.js";
import { queueServiceHandlers } from "./queue-service-handlers.js";
import { createServerServiceDefinition } from "./service-definition.js";
import { bridgeUnaryHandlers } from "./unary-bridge.js";

// The protocol's definition (src/protocol/queue-service-definition.ts) with
// the server's request reader: the same paths and messages.
const servedDefinition = createServerServiceDefinition(QueueService);

/** Serves holdshelf.v1.QueueService from a broker on a gRPC server; with a gate, only to callers its tokens allow. */
export function addQueueService(
  server: Pick<Server, "addService">,
  broker: Broker,
  logger: Logger,
  gate: AuthGate | undefined,
  // Where each queue is served: forwarding is not wired yet.
  _router: QueueRouter,
): void {
  const logUnexpected = (error: unknown): void => logger.error("unexpected error in a call", { error });
  const handlers = queueServiceHandlers(broker);
  server.addService(servedDefinition, {
    ...bridgeUnaryHandlers(gate === undefined ? handlers : authorizeQueueService(handlers, gate), logUnexpected),
    heartbeat: (call: HeartbeatCall) => {
      if (gate === undefined) return new HeartbeatSession(call, broker, logger, logUnexpected);
      let authorizeQueue;
      try {
        authorizeQueue = authorizeHeartbeat(gate, call.metadata);
      } catch (error) {
        call.emit("error", toErrorStatus(error, logUnexpected));
        return;
      }
      return new HeartbeatSession(call, broker, logger, logUnexpected, authorizeQueue);
    },
  });
}
