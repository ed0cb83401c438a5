import { setTimeout as sleep } from "node:timers/promises";
import { MessageState } from "../../../gen/holdshelf/v1/message_pb.js";
import { callOptions, type Epoch } from "./crash-epoch.js";
import type { Lease } from "./lease-calls.js";
import type { Ledger } from "./ledger.js";

/**
 * How long a release_on_disconnect consumer's leases may outlive its
 * SIGKILL: generous for a loaded 2-core machine (the release takes tens of
 * ms, under 1 s in every run so far), yet well within a broker's life (at
 * most 2 s) and the killed consumer's 4 to 8 s leases, so that a broker that
 * let them run to their deadlines is caught.
 */
const releaseLimitMs = 1200;

/**
 * After a release_on_disconnect consumer's process was SIGKILLed at `at`:
 * peeks at the queue until none of `leases` is in flight under that lease
 * any more (visible again, received again with a higher receive count, or
 * gone) and returns how long after the kill that was. A lease still held
 * in a peek begun `limitMs` after the kill, while the broker was up all
 * along, is recorded as unexpected. Undefined if the broker's kill began
 * meanwhile: nothing is promised then.
 */
export async function waitUntilReleased(
  epoch: Epoch,
  ledger: Ledger,
  queue: string,
  leases: readonly Lease[],
  at: number,
  limitMs = releaseLimitMs,
): Promise<number | undefined> {
  for (;;) {
    const peekedAt = Date.now();
    let held: Lease[];
    try {
      held = await stillLeased(epoch, queue, leases);
    } catch (error) {
      ledger.failure(error, `PeekMessages on ${queue}`, epoch.killing);
      return undefined;
    }
    if (epoch.killing) return undefined;
    if (held.length === 0) return Date.now() - at;
    if (peekedAt - at > limitMs) {
      ledger.unexpected.push(
        `${held.map((lease) => lease.delivery.messageId).join(", ")} still leased ${peekedAt - at} ms after the ` +
          `release_on_disconnect Subscribe consumer that held ${held.length > 1 ? "them" : "it"} was SIGKILLed`,
      );
      return undefined;
    }
    await sleep(50);
  }
}

/** The leases whose messages are still in flight with the receive count of their delivery: nobody received them since. */
async function stillLeased(epoch: Epoch, queue: string, leases: readonly Lease[]): Promise<Lease[]> {
  const byId = new Map(leases.map((lease) => [lease.delivery.messageId, lease]));
  const held: Lease[] = [];
  let unseen = byId.size;
  let pageToken = "";
  // Pages until every message was seen (or the queue's end: the rest are gone); a backlog makes the queue long.
  do {
    const page = await epoch.rpc.peekMessages({ queue, pageSize: 100, pageToken }, callOptions());
    for (const message of page.messages) {
      const lease = byId.get(message.messageId);
      if (lease === undefined) continue;
      unseen--;
      if (message.state === MessageState.IN_FLIGHT && message.receiveCount === lease.delivery.receiveCount)
        held.push(lease);
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "" && unseen > 0);
  return held;
}
