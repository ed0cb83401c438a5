import type { QueueServiceRpc } from "../client/rpc-client.js";
import { RpcError } from "../client/rpc-error.js";
import type { QueueAdmin } from "../server/apply-queues.js";
import { queueServiceAdmin } from "../server/queue-service-admin.js";

/** `applyQueues`' calls made over gRPC, as `holdshelf queue apply` makes them. */
export function rpcQueueAdmin(rpc: QueueServiceRpc): QueueAdmin {
  return queueServiceAdmin(rpc, (error) => error instanceof RpcError && error.reason === "QUEUE_ALREADY_EXISTS");
}
