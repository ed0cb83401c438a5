// Which broker of a cluster serves a queue: the one whose log and metrics
// hold its story, and whose loss moves it to another.
import type { QueueDetail } from "./api-types.js";
import { clusterHref } from "./route.js";

/** A line of the queue page's facts naming the broker that serves it; nothing outside cluster mode. */
export function ServedBy({ servedBy }: { servedBy: QueueDetail["servedBy"] }) {
  if (servedBy === null || servedBy === undefined) return null;
  return (
    <li data-testid="served-by">
      Served by: <strong>{servedBy.nodeId}</strong> <span class="muted">at {servedBy.address}</span> (
      <a href={clusterHref}>cluster</a>)
    </li>
  );
}
