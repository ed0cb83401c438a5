import { HoldshelfError } from "../../errors/holdshelf-error.js";

/** QUEUE_MOVING: the queue's shard is going to (or coming from) another broker this moment; a retry finds its owner. */
export function queueMoving(queueName?: string): HoldshelfError {
  const queue = queueName === undefined ? "the queue" : `queue "${queueName}"`;
  return new HoldshelfError("QUEUE_MOVING", `${queue} is moving between brokers; retry`);
}

/** Whether an error is QUEUE_MOVING: work cut off because its queue went to another broker. */
export function isQueueMoving(error: unknown): boolean {
  return error instanceof HoldshelfError && error.reason === "QUEUE_MOVING";
}
