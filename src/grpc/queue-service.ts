import type { ChannelCredentials, Server } from "@grpc/grpc-js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { AuthGate } from "../auth/auth-gate.js";
import type { QueueServiceBroker } from "../broker/broker-slices.js";
import type { QueueRouter } from "../cluster/queue-router.js";
import type { Logger } from "../logging/logger.js";
import { authorizeHeartbeat, authorizeQueueService, tokenCaller } from "../service/queue-service-auth.js";
import { queueServiceHandlers } from "../service/queue-service-handlers.js";
import type { UnaryHandlers } from "../service/unary-handlers.js";
import { toErrorStatus } from "./error-status.js";
import { routeQueueCalls } from "./forwarding/forwarding-handlers.js";
import { PeerClients } from "./forwarding/peer-clients.js";
import { HeartbeatSession, type HeartbeatCall, type HeartbeatRouting } from "./heartbeat-session.js";
import { createServerServiceDefinition } from "./service-definition.js";
import { bridgeUnaryHandlers } from "./unary-bridge.js";

// The protocol's definition (src/protocol/queue-service-definition.ts) with
// the server's request reader: the same paths and messages.
const servedDefinition = createServerServiceDefinition(QueueService);

/** Options of addQueueService. */
export interface QueueServiceOptions {
  /** The server's --max-request-bytes, which bounds the calls it passes to other brokers. */
  readonly maxRequestBytes: number;
  /** Credentials of the channels to other brokers (cluster mode): TLS, later; plaintext if unset. */
  readonly peerCredentials?: ChannelCredentials;
}

/** What addQueueService leaves running besides the service. */
export interface QueueServiceHandle {
  /**
   * The unary handlers, routed to each queue's owner but not authorized: the
   * SQS endpoint and the console call them with their own callers (src/service/queue-calls.ts).
   */
  readonly handlers: UnaryHandlers<typeof QueueService>;
  /** Closes the channels to other brokers: at shutdown, once the server has stopped taking calls. */
  close(): void;
}

/**
 * Serves holdshelf.v1.QueueService from a broker on a gRPC server; with a
 * gate, only to callers its tokens allow. Calls on queues the router says
 * another broker serves go to that broker (src/grpc/forwarding/).
 */
export function addQueueService(
  server: Pick<Server, "addService">,
  broker: QueueServiceBroker,
  logger: Logger,
  gate: AuthGate | undefined,
  router: QueueRouter,
  options: QueueServiceOptions,
): QueueServiceHandle {
  const logUnexpected = (error: unknown): void => logger.error("unexpected error in a call", { error });
  const peers = new PeerClients({
    maxRequestBytes: options.maxRequestBytes,
    credentials: options.peerCredentials,
  });
  const routing: HeartbeatRouting = { router, peers };
  // Routing inside authorization: a caller is refused before it could learn which broker serves a queue.
  const handlers = routeQueueCalls(queueServiceHandlers(broker), router, peers);
  server.addService(servedDefinition, {
    ...bridgeUnaryHandlers(
      gate === undefined ? handlers : authorizeQueueService(handlers, tokenCaller(gate)),
      logUnexpected,
    ),
    heartbeat: (call: HeartbeatCall) => {
      if (gate === undefined) return new HeartbeatSession(call, broker, logger, logUnexpected, routing);
      let authorizeQueue: (queue: string) => void;
      try {
        authorizeQueue = authorizeHeartbeat(gate, call.metadata);
      } catch (error) {
        call.emit("error", toErrorStatus(error, logUnexpected));
        return;
      }
      return new HeartbeatSession(call, broker, logger, logUnexpected, routing, authorizeQueue);
    },
  });
  return { handlers, close: () => peers.close() };
}
