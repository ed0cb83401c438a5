import type { Server } from "@grpc/grpc-js";
import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { Broker } from "../broker/broker.js";
import type { Logger } from "../logging/logger.js";
import { HeartbeatSession, type HeartbeatCall } from "./heartbeat-session.js";
import { queueServiceHandlers } from "./queue-service-handlers.js";
import { createServiceDefinition } from "./service-definition.js";
import { bridgeUnaryHandlers } from "./unary-bridge.js";

/** The grpc-js definition of holdshelf.v1.QueueService, shared by server and clients. */
export const queueServiceDefinition = createServiceDefinition(QueueService);

/** Serves holdshelf.v1.QueueService from a broker on a gRPC server. */
export function addQueueService(
  server: Pick<Server, "addService">,
  broker: Broker,
  logger: Logger,
): void {
  const logUnexpected = (error: unknown): void => logger.error("unexpected error in a call", { error });
  server.addService(queueServiceDefinition, {
    ...bridgeUnaryHandlers(queueServiceHandlers(broker), logUnexpected),
    heartbeat: (call: HeartbeatCall) => new HeartbeatSession(call, broker, logger, logUnexpected),
  });
}
