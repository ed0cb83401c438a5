// What the message browser's actions know of the queue and of the queues
// they may send to: names, FIFO-ness, and what the token may do on each.
import { getQueue, listQueues } from "./api.js";
import type { QueuePermissions } from "./api-types.js";

/** A queue a message may be moved or copied to. */
export interface Destination {
  readonly name: string;
  readonly fifo: boolean;
  readonly permissions: QueuePermissions;
}

/** The browsed queue, for its messages' actions. */
export interface TriageQueue {
  readonly name: string;
  readonly fifo: boolean;
  readonly permissions: QueuePermissions;
  /** The queues that dead-letter into this one: it is a dead-letter queue when there are any. */
  readonly deadLetterSources: readonly string[];
  /** Every queue the token sees, this one included. */
  readonly destinations: readonly Destination[];
  /** Whether any destination is a FIFO queue (a copy to one needs a message group). */
  readonly fifoDestinations: boolean;
}

/** Reads the queue and the queue list. */
export async function loadTriageQueue(name: string): Promise<TriageQueue> {
  const [detail, list] = await Promise.all([getQueue(name), listQueues()]);
  const destinations = list.queues.map((row) => ({
    name: row.name,
    fifo: row.fifo !== null,
    permissions: row.permissions,
  }));
  return {
    name,
    fifo: detail.queue.fifo !== null,
    permissions: detail.queue.permissions,
    deadLetterSources: detail.queue.deadLetterSourceQueues,
    destinations,
    fifoDestinations: destinations.some((destination) => destination.fifo),
  };
}
