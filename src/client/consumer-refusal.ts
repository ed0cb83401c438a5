import type { Reason } from "../protocol/error-reasons.js";
import { RpcError } from "./rpc-error.js";

/**
 * The reasons that end a Consumer, at its start or while it runs: the broker
 * refuses it its queue (which does not exist, or was deleted) or its token,
 * and no retry can succeed until someone changes that (Pub/Sub's Receive
 * returns NotFound at once too; the Go and Python Consumers stop on the same
 * reasons). Every other failure, UNAVAILABLE and QUEUE_MOVING among them, is
 * retried.
 */
const refusals: ReadonlySet<string> = new Set<Reason>([
  "QUEUE_NOT_FOUND",
  "PERMISSION_DENIED",
  "TOKEN_MISSING",
  "TOKEN_INVALID",
]);

/** Whether a failure of a Consumer's own calls on its queue (GetQueue, Receive, its stream) ends the Consumer. */
export function isConsumerRefusal(error: unknown): error is RpcError {
  return error instanceof RpcError && refusals.has(error.reason);
}
