import type { QueueState } from "./queue-state.js";
import type { QueueInfo } from "./types.js";

/**
 * A queue as GetQueue, ListQueues and a metrics scrape report it at `now`,
 * with its counts as of its last advance and its dead-letter sources from
 * `sources` (QueueRegistry.knownDeadLetterSources).
 */
export function describeQueue(queue: QueueState, now: number, sources: ReadonlyMap<string, string[]>): QueueInfo {
  const { name, config, createTime, updateTime } = queue.record;
  const counts = queue.counts();
  const oldestMessageAgeMs = counts.oldestSendTime === undefined ? undefined : Math.max(0, now - counts.oldestSendTime);
  const deadLetterSourceQueues = sources.get(name) ?? [];
  return { name, config, createTime, updateTime, counts, oldestMessageAgeMs, deadLetterSourceQueues };
}
