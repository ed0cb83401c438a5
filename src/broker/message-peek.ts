import { invalidArgument, queueNotFound } from "../errors/holdshelf-error.js";
import {
  decodePeekToken,
  defaultPeekPageSize,
  encodePeekToken,
  maxPeekPageSize,
  type PeekCursor,
} from "../protocol/peek-pages.js";
import type { Store } from "../store/store.js";
import { messageView } from "./message-view.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import { perMessageOverheadBytes, receiveResponseBudgetBytes } from "./request-limits.js";
import type { PeekedMessage, PeekPage, PeekState } from "./types.js";

/**
 * One page of PeekMessages: a queue's messages in arrival order from the
 * page token's cursor, each with its state at `now`, read from the store
 * as Receive reads them. It writes nothing and tells no metric: leases,
 * receive counts and visibility stay as they are, and the state is worked
 * out from each message's schedule entry rather than by advancing the
 * queue (which could expire leases and start dead-letter moves). A page
 * takes at least one message, and no more than fit Receive's response
 * budget; a message deleted while the page is read is left out (so a page
 * may come back with fewer, even none, and a token that goes on).
 */
export async function peekMessages(
  queue: QueueState,
  store: Pick<Store, "readMessages">,
  now: number,
  pageSize: number,
  pageToken: string,
): Promise<PeekPage> {
  const size = pageSize || defaultPeekPageSize;
  if (!Number.isInteger(size) || size < 1 || size > maxPeekPageSize) {
    throw invalidArgument("page_size", `must be between 0 and ${maxPeekPageSize}`);
  }
  const cursor = pageToken === "" ? undefined : decodePeekToken(pageToken);
  if (cursor === undefined && pageToken !== "")
    throw invalidArgument("page_token", "is not a token this service returned");
  const { taken, more } = takePage(queue, cursor, size);
  const last = taken[taken.length - 1];
  const nextPageToken = more && last !== undefined ? encodePeekToken(last) : "";
  // The copies are a snapshot of the schedule as it was when taken: states are from then.
  const contents = await store.readMessages(queue.record.dataId, taken);
  // Deleted while its messages were read: say so rather than hand back a page of a queue that is gone.
  if (queue.deleted) throw queueNotFound(queue.record.name);
  const messages: PeekedMessage[] = [];
  taken.forEach((message, index) => {
    const content = contents[index];
    if (content === undefined) return; // deleted or purged since it was taken
    messages.push({
      ...messageView(message, content),
      ...stateOf(message, now),
      checkpointSize: content.checkpoint?.byteLength ?? 0,
    });
  });
  return { messages, nextPageToken };
}

/** Takes up to `size` messages after the cursor within the response budget, and says whether any are left after them. */
function takePage(
  queue: QueueState,
  cursor: PeekCursor | undefined,
  size: number,
): { taken: LiveMessage[]; more: boolean } {
  const taken: LiveMessage[] = [];
  let more = false;
  let bytes = 0;
  queue.walkEnqueued(cursor, (message) => {
    bytes += message.size + perMessageOverheadBytes;
    if (taken.length === size || (taken.length > 0 && bytes > receiveResponseBudgetBytes)) {
      more = true;
      return false;
    }
    taken.push(message);
    return true;
  });
  return { taken, more };
}

/**
 * Where a message stands at `now`, by its schedule entry: hidden by a lease
 * until its deadline, hidden unleased until its ready time (a delay or a
 * retry backoff), else visible. A lease whose deadline passed is visible,
 * though the queue's rules (retry backoff, dead-lettering, retention) may
 * act on it the moment maintenance runs: peeking never runs them.
 */
function stateOf(
  message: LiveMessage,
  now: number,
): { state: PeekState; leaseDeadline?: number; visibleTime?: number } {
  if (message.readyAt <= now) return { state: "VISIBLE" };
  if (message.leased) return { state: "IN_FLIGHT", leaseDeadline: message.readyAt };
  return { state: "DELAYED", visibleTime: message.readyAt };
}
