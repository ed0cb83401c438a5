import { brokerFailure } from "../service/broker-failure.js";
import { QueueCalls, type QueueHandlers } from "../service/queue-calls.js";
import type { QueueAdmin } from "./apply-queues.js";
import { queueServiceAdmin } from "./queue-service-admin.js";

/** `applyQueues`' calls made in-process on the broker's handlers (routed to each queue's owner in cluster mode), with no caller's token. */
export function localQueueAdmin(handlers: QueueHandlers): QueueAdmin {
  const calls = new QueueCalls(handlers, undefined, new AbortController().signal);
  return queueServiceAdmin(
    {
      listQueues: (request) => calls.call("listQueues", request),
      getQueue: (request) => calls.call("getQueue", request),
      createQueue: (request) => calls.call("createQueue", request),
      updateQueue: (request) => calls.call("updateQueue", request),
      deleteQueue: (request) => calls.call("deleteQueue", request),
    },
    (error) => brokerFailure(error)?.reason === "QUEUE_ALREADY_EXISTS",
  );
}
