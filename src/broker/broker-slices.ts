import type { Broker } from "./broker.js";

// The Broker sliced by caller, as grpc-node services take Pick<grpc.Server, "addService">:
// each caller depends on the operations it calls, and a test can hand it a fake of that slice.

/** The QueueService's unary operations, as its handlers call them (service/queue-service-handlers.ts). */
export type QueueOperations = Pick<
  Broker,
  | "createQueue"
  | "getQueue"
  | "refreshDeadLetterSources"
  | "listQueues"
  | "updateQueue"
  | "deleteQueue"
  | "purgeQueue"
  | "sendWithResult"
  | "sendBatchWithResults"
  | "receive"
  | "delete"
  | "deleteBatch"
  | "changeVisibility"
  | "changeVisibilityBatch"
  | "peekMessages"
  | "redriveMessages"
  | "startMessageMoveTask"
  | "listMessageMoveTasks"
  | "cancelMessageMoveTask"
>;

/** A Heartbeat stream's operations, as its session calls them (grpc/heartbeat-session.ts). */
export type LeaseStreamOperations = Pick<
  Broker,
  "openLeaseStream" | "renewLeases" | "hurryRenewals" | "closeLeaseStream"
>;

/** What the QueueService is served from (grpc/queue-service.ts): its handlers' operations and its Heartbeat sessions'. */
export type QueueServiceBroker = QueueOperations & LeaseStreamOperations;

/** What the storage recovery calls when a write fails and once storage works again (server/storage-recovery.ts). */
export type StorageLifecycle = Pick<Broker, "suspend" | "reload">;
