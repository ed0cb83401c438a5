import type { Queue, QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import type { QueueAdmin } from "./apply-queues.js";

/** The QueueService calls `applyQueues` needs: the gRPC client's methods, or the handlers' in-process. */
export interface QueueServiceAdminCalls {
  listQueues(request: { pageToken: string; pageSize: number }): Promise<{ queues: Queue[]; nextPageToken: string }>;
  getQueue(request: { name: string }): Promise<{ queue?: Queue | undefined }>;
  createQueue(request: { name: string; config: QueueConfig }): Promise<unknown>;
  updateQueue(request: { name: string; config: QueueConfig }): Promise<unknown>;
  deleteQueue(request: { name: string }): Promise<unknown>;
}

/**
 * `applyQueues`' calls on QueueService, however they reach it;
 * `alreadyExists` tells a QUEUE_ALREADY_EXISTS refusal in the error type of
 * that path.
 */
export function queueServiceAdmin(
  service: QueueServiceAdminCalls,
  alreadyExists: (error: unknown) => boolean,
): QueueAdmin {
  return {
    async listQueues() {
      const queues: Queue[] = [];
      let pageToken = "";
      do {
        const page = await service.listQueues({ pageToken, pageSize: 1000 });
        queues.push(...page.queues);
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return queues;
    },
    async getQueue(name) {
      const { queue } = await service.getQueue({ name });
      if (queue === undefined) throw new Error(`GetQueue of "${name}" answered without the queue`);
      return queue;
    },
    async createQueue(name, config) {
      try {
        await service.createQueue({ name, config });
        return "created";
      } catch (error) {
        if (alreadyExists(error)) return "exists";
        throw error;
      }
    },
    async updateQueue(name, config) {
      await service.updateQueue({ name, config });
    },
    async deleteQueue(name) {
      await service.deleteQueue({ name });
    },
  };
}
