import type { Reason } from "../protocol/error-reasons.js";
import { RpcError } from "./rpc-error.js";

/**
 * The reasons that end a Consumer that has not started yet: the broker
 * refuses its queue, and trying again will not change that (Pub/Sub's
 * Receive returns NotFound at once too). Every other failure, UNAVAILABLE
 * and QUEUE_MOVING among them, is retried.
 */
const startRefusals: ReadonlySet<string> = new Set<Reason>(["QUEUE_NOT_FOUND", "PERMISSION_DENIED"]);

/** Whether a failure of a Consumer's first calls on its queue ends the Consumer instead of being retried. */
export function isStartRefusal(error: unknown): error is RpcError {
  return error instanceof RpcError && startRefusals.has(error.reason);
}
