// What the message browser's actions know of the queue and of the queues
// they may send to: names, FIFO-ness, and what the token may do on each.
import { getQueue, listQueues } from "./api.js";

/** What the session's token may do on a queue (the queue views' `permissions`). */
export interface QueuePermissions {
  readonly send: boolean;
  readonly receive: boolean;
  readonly admin: boolean;
}

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
  /** Every queue the token sees, this one included. */
  readonly destinations: readonly Destination[];
  /** Whether any destination is a FIFO queue (a copy to one needs a message group). */
  readonly fifoDestinations: boolean;
}

// A broker that does not say (an older one) is taken to allow: the broker still checks every call.
const unknown: QueuePermissions = { send: true, receive: true, admin: true };

const permissionsOf = (view: object): QueuePermissions =>
  (view as { permissions?: QueuePermissions }).permissions ?? unknown;

/** Reads the queue and the queue list. */
export async function loadTriageQueue(name: string): Promise<TriageQueue> {
  const [detail, list] = await Promise.all([getQueue(name), listQueues()]);
  const destinations = list.queues.map((row) => ({
    name: row.name,
    fifo: row.fifo !== null,
    permissions: permissionsOf(row),
  }));
  return {
    name,
    fifo: detail.queue.fifo !== null,
    permissions: permissionsOf(detail.queue),
    destinations,
    fifoDestinations: destinations.some((destination) => destination.fifo),
  };
}
