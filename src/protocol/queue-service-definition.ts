import { QueueService } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { createServiceDefinition } from "./service-definition.js";

/**
 * The grpc-js definition of holdshelf.v1.QueueService as clients call it.
 * The server serves the same paths and messages from its own definition,
 * which also answers undecodable requests (src/grpc/queue-service.ts).
 */
export const queueServiceDefinition = createServiceDefinition(QueueService);
