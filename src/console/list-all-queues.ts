// Every queue the token may see, as the console's list and overview read
// them: ListQueues' pages until the last, or the listing limit.
import type { Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import { maxPageSize } from "../protocol/queue-pages.js";
import type { QueueCalls } from "../service/queue-calls.js";

/** The most queues a console listing holds (queues or their activity): the broker's default queue limit. */
export const maxListedQueues = 10_000;

/** The queues, and whether more exist than the listing holds. */
export async function listAllQueues(calls: QueueCalls): Promise<{ queues: Queue[]; truncated: boolean }> {
  const queues: Queue[] = [];
  let pageToken = "";
  do {
    const page = await calls.call("listQueues", { pageSize: maxPageSize, pageToken });
    queues.push(...page.queues);
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && queues.length < maxListedQueues);
  return { queues, truncated: pageToken !== "" };
}
