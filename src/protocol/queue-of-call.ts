// Which queue each unary QueueService call names. The broker that owns that
// queue serves the call: a broker forwards the call there (cluster mode),
// and a client that follows owner hints calls it directly.

/** The request field naming the queue, per unary method; ListQueues names none. */
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
  // A redrive is served by the dead-letter queue's owner, whose messages move.
  redriveMessages: "deadLetterQueue",
} as const;

/** A unary method that names a queue. */
export type QueueCall = keyof typeof queueFieldOfCall;

/** The queue a call names, or undefined for a method that names none. */
export function queueOfCall(method: string, request: object): string | undefined {
  const field = (queueFieldOfCall as Record<string, string>)[method];
  if (field === undefined) return undefined;
  const value = (request as Record<string, unknown>)[field];
  return typeof value === "string" ? value : "";
}
