import type { QueueActivity } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { maxPageSize } from "../protocol/queue-pages.js";
import type { QueueCalls } from "../service/queue-calls.js";
import { maxListedQueues } from "./list-all-queues.js";

/**
 * The activity of every queue the token may see (or of `names` only), each
 * from the broker that serves it, by queue name: ListQueueActivity's pages
 * until the last, or the listing limit.
 */
export async function readActivity(
  calls: QueueCalls,
  maxSamples: number,
  names: readonly string[] = [],
): Promise<Map<string, QueueActivity>> {
  const found = new Map<string, QueueActivity>();
  let pageToken = "";
  do {
    const page = await calls.call("listQueueActivity", {
      names: [...names],
      pageSize: maxPageSize,
      pageToken,
      maxSamples,
    });
    for (const activity of page.activity) found.set(activity.queue, activity);
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && found.size < maxListedQueues);
  return found;
}
