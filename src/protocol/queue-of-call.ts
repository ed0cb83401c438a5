// Which queue each unary QueueService call names. The broker that owns that
// queue serves the call: a broker forwards the call there (cluster mode),
// and a client that follows owner hints calls it directly.

import { parseMoveTaskHandle } from "./move-task-handle.js";

/**
 * The request field naming the queue, per unary method, or a function that
 * reads it from the request; ListQueues names none.
 */
export const queueFieldOfCall = {
  createQueue: "name",
  getQueue: "name",
  updateQueue: "name",
  deleteQueue: "name",
  purgeQueue: "name",
  send: "queue",
  sendBatch: "queue",
  receive: "queue",
  delete: "queue",
  deleteBatch: "queue",
  changeVisibility: "queue",
  changeVisibilityBatch: "queue",
  peekMessages: "queue",
  // A per-message move is served by the owner of the queue that holds the message.
  discardMessage: "queue",
  moveMessage: "queue",
  // A redrive is served by the dead-letter queue's owner, whose messages move.
  redriveMessages: "deadLetterQueue",
  // A move task lives in its source queue's record.
  startMessageMoveTask: "sourceQueue",
  listMessageMoveTasks: "sourceQueue",
  // The handle carries its source queue's name; a malformed one names none ("").
  cancelMessageMoveTask: (request: Record<string, unknown>) =>
    typeof request["taskHandle"] === "string" ? (parseMoveTaskHandle(request["taskHandle"])?.sourceQueue ?? "") : "",
} as const satisfies Record<string, string | ((request: Record<string, unknown>) => string)>;

/** A unary method that names a queue. */
export type QueueCall = keyof typeof queueFieldOfCall;

/** The queue a call names, or undefined for a method that names none. */
export function queueOfCall(method: string, request: object): string | undefined {
  if (!Object.hasOwn(queueFieldOfCall, method)) return undefined;
  const field = queueFieldOfCall[method as QueueCall];
  if (typeof field === "function") return field(request as Record<string, unknown>);
  const value = (request as Record<string, unknown>)[field];
  return typeof value === "string" ? value : "";
}
