import type { Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import type { QueueServiceRpc } from "../client/rpc-client.js";
import { RpcError } from "../client/rpc-error.js";
import type { QueueAdmin } from "../server/apply-queues.js";

/** `applyQueues`' calls made over gRPC, as `holdshelf queue apply` makes them. */
export function rpcQueueAdmin(rpc: QueueServiceRpc): QueueAdmin {
  return {
    async listQueues() {
      const queues: Queue[] = [];
      let pageToken = "";
      do {
        const page = await rpc.listQueues({ pageToken, pageSize: 1000 });
        queues.push(...page.queues);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return queues;
    },
    async getQueue(name) {
      const { queue } = await rpc.getQueue({ name });
      if (queue === undefined) throw new Error(`GetQueue of "${name}" answered without the queue`);
      return queue;
    },
    async createQueue(name, config) {
      try {
        await rpc.createQueue({ name, config });
        return "created";
      } catch (error) {
        if (error instanceof RpcError && error.reason === "QUEUE_ALREADY_EXISTS") return "exists";
        throw error;
      }
    },
    async updateQueue(name, config) {
      await rpc.updateQueue({ name, config });
    },
    async deleteQueue(name) {
      await rpc.deleteQueue({ name });
    },
  };
}
