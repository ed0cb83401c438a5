import type { Broker } from "./broker.js";
import type { LeaseStreams } from "./lease-streams.js";

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
  | "discardMessage"
  | "moveMessage"
  | "redriveMessages"
  | "startMessageMoveTask"
  | "listMessageMoveTasks"
  | "cancelMessageMoveTask"
>;

/** A Heartbeat stream's operations, as its session calls them (grpc/heartbeat-session.ts). */
export type LeaseStreamOperations = Pick<LeaseStreams, "open" | "renew" | "hurry" | "close">;

/** A Subscribe stream's operations, as its session calls them (service/subscribe-session.ts). */
export type SubscribeOperations = Pick<LeaseStreams, "subscribe" | "deliver" | "settle" | "hurry" | "close">;

/** What the QueueService is served from (grpc/queue-service.ts): its handlers' operations and its streams'. */
export type QueueServiceBroker = QueueOperations & { readonly streams: LeaseStreamOperations & SubscribeOperations };

/** What the storage recovery calls when a write fails and once storage works again (server/storage-recovery.ts). */
export type StorageLifecycle = Pick<Broker, "suspend" | "reload">;
