import type { Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import { brokerFailure } from "../service/broker-failure.js";
import { QueueCalls, type QueueHandlers } from "../service/queue-calls.js";
import type { QueueAdmin } from "./apply-queues.js";

/** `applyQueues`' calls made in-process on the broker's handlers (routed to each queue's owner in cluster mode), with no caller's token. */
export function localQueueAdmin(handlers: QueueHandlers): QueueAdmin {
  const calls = new QueueCalls(handlers, undefined, new AbortController().signal);
  return {
    async listQueues() {
      const queues: Queue[] = [];
      let pageToken = "";
      do {
        const page = await calls.call("listQueues", { pageToken, pageSize: 1000 });
        queues.push(...page.queues);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return queues;
    },
    async getQueue(name) {
      const { queue } = await calls.call("getQueue", { name });
      if (queue === undefined) throw new Error(`GetQueue of "${name}" answered without the queue`);
      return queue;
    },
    async createQueue(name, config) {
      try {
        await calls.call("createQueue", { name, config });
        return "created";
      } catch (error) {
        if (brokerFailure(error)?.reason === "QUEUE_ALREADY_EXISTS") return "exists";
        throw error;
      }
    },
    async updateQueue(name, config) {
      await calls.call("updateQueue", { name, config });
    },
    async deleteQueue(name) {
      await calls.call("deleteQueue", { name });
    },
  };
}
