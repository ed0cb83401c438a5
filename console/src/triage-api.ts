// The message browser's triage calls: the bounded search and one message's
// delete, move and edited copy (issue #36).
import { queuePath, send } from "./api.js";
import type { PeekedMessage } from "./api-types.js";

/** What a search compares its text with. */
export type SearchField = "id" | "body" | "attribute";

/** GET /api/queues/:name/messages/search: one bounded stretch of the scan. */
export interface SearchPage {
  readonly matches: readonly PeekedMessage[];
  /** Messages read by this request. */
  readonly scanned: number;
  /** The most one request reads. */
  readonly scanLimit: number;
  /** Continues the scan; empty when it reached the end of the queue. */
  readonly nextPageToken: string;
}

/** POST /api/queues/:name/messages/:id/copy. */
export interface MessageCopy {
  readonly body: string;
  /** "" sends it to the message's dead-letter source. */
  readonly destinationQueue: string;
  /** FIFO: "" keeps the original's group. */
  readonly messageGroupId: string;
  /** Where the page read the message ("" for the first page), so the broker finds it there. */
  readonly pageToken: string;
}

const messagePath = (name: string, messageId: string, rest = "") =>
  queuePath(name, `/messages/${encodeURIComponent(messageId)}${rest}`);

/** Searches the queue from `pageToken` ("" for its start), reading at most the scan limit. */
export function searchMessages(name: string, field: SearchField, text: string, pageToken: string): Promise<SearchPage> {
  const query = new URLSearchParams({ field, q: text });
  if (pageToken !== "") query.set("pageToken", pageToken);
  return send<SearchPage>("GET", queuePath(name, `/messages/search?${query}`));
}

/** Deletes one message, whatever its state. */
export const deleteMessage = (name: string, messageId: string) => send<object>("DELETE", messagePath(name, messageId));

/** Moves one message to `destinationQueue`, or with "" back to its dead-letter source. */
export const moveMessage = (name: string, messageId: string, destinationQueue: string) =>
  send<{ destinationQueue: string }>("POST", messagePath(name, messageId, "/move"), { destinationQueue });

/** Sends a new message with an edited body and the original's attributes; the original stays. */
export const copyMessage = (name: string, messageId: string, copy: MessageCopy) =>
  send<{ messageId: string; destinationQueue: string }>("POST", messagePath(name, messageId, "/copy"), copy);
