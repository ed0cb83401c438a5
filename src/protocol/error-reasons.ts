// What every side of holdshelf's wire agrees on about errors: the status
// codes, the stable reasons with the code each travels with, and where the
// details ride. The server builds errors from these; clients read them.

/**
 * gRPC status codes, numbered as the gRPC specification numbers them, so that
 * the broker can name them without depending on grpc-js.
 */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
/** One of the gRPC status codes holdshelf answers with. */
export type Code = (typeof Code)[keyof typeof Code];

/**
 * Stable, machine-readable error reasons with the status code each is sent
 * with. Reasons never change between versions; messages may.
 */
export const reasonCodes = {
  QUEUE_NOT_FOUND: Code.NOT_FOUND,
  QUEUE_ALREADY_EXISTS: Code.ALREADY_EXISTS,
  INVALID_ARGUMENT: Code.INVALID_ARGUMENT,
  MESSAGE_TOO_LARGE: Code.INVALID_ARGUMENT,
  RECEIPT_HANDLE_INVALID: Code.INVALID_ARGUMENT,
  LEASE_SUPERSEDED: Code.FAILED_PRECONDITION,
  MESSAGE_NOT_FOUND: Code.NOT_FOUND,
  LEASE_LIMIT_EXCEEDED: Code.FAILED_PRECONDITION,
  TOO_MANY_IN_FLIGHT: Code.RESOURCE_EXHAUSTED,
  // Capacity limits (docs/operations.md "Limits"): the request was fine, the broker is
  // full; the same request may succeed later, so clients back off and retry.
  TOO_MANY_STREAMS: Code.RESOURCE_EXHAUSTED,
  TOO_MANY_WAITING_RECEIVES: Code.RESOURCE_EXHAUSTED,
  TOO_MANY_SUBSCRIBERS: Code.RESOURCE_EXHAUSTED,
  TOO_MANY_QUEUES: Code.RESOURCE_EXHAUSTED,
  BROKER_FULL: Code.RESOURCE_EXHAUSTED,
  DEAD_LETTER_QUEUE_NOT_FOUND: Code.FAILED_PRECONDITION,
  QUEUE_IN_USE: Code.FAILED_PRECONDITION,
  // FIFO queues: a send missing what a FIFO queue needs, or naming FIFO fields on a standard queue.
  MESSAGE_GROUP_ID_REQUIRED: Code.INVALID_ARGUMENT,
  DEDUPLICATION_ID_REQUIRED: Code.INVALID_ARGUMENT,
  NOT_A_FIFO_QUEUE: Code.INVALID_ARGUMENT,
  MOVE_TASK_RUNNING: Code.FAILED_PRECONDITION,
  MOVE_TASK_NOT_FOUND: Code.NOT_FOUND,
  // AdminService.Backup on a broker whose store it cannot copy (cluster mode: PostgreSQL's own tools back it up).
  BACKUP_NOT_SUPPORTED: Code.FAILED_PRECONDITION,
  SHUTTING_DOWN: Code.UNAVAILABLE,
  // Writes to the data directory fail (disk full, I/O error); the broker
  // recovers by itself once they succeed again, so clients retry later.
  STORAGE_UNAVAILABLE: Code.UNAVAILABLE,
  // Cluster mode: the queue's shard has no serving owner this moment (it is
  // moving between brokers, or its owner cannot be reached); a retry shortly
  // finds the new owner, since any broker answers for any queue.
  QUEUE_MOVING: Code.UNAVAILABLE,
  TOKEN_MISSING: Code.UNAUTHENTICATED,
  TOKEN_INVALID: Code.UNAUTHENTICATED,
  PERMISSION_DENIED: Code.PERMISSION_DENIED,
  INTERNAL: Code.INTERNAL,
} as const;
/** A stable error reason. */
export type Reason = keyof typeof reasonCodes;

/** One bad field of a request, named by its proto field path. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

/** The ErrorInfo domain of every holdshelf error. */
export const errorDomain = "holdshelf";

/** The trailer that carries a google.rpc.Status, read by every language's status-details helper. */
export const statusDetailsKey = "grpc-status-details-bin";
