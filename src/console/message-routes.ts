import { randomUUID } from "node:crypto";
import type { PeekedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import type { QueueCalls } from "../service/queue-calls.js";
import { ConsoleError, consoleErrors, fieldReasons } from "./console-error.js";
import { objectBody, optionalString, stringField } from "./console-input.js";
import { messageMatches, scanQueue, searchQueryOf } from "./message-search.js";
import { peekedMessageView } from "./peeked-message-view.js";

/** The parts of an API request these routes read (console-api.ts's ApiRequest). */
interface MessageRequest {
  readonly method: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

/** What these routes work with (console-api.ts's ApiContext): the calls as the session's token, and the audit log. */
interface MessageContext {
  readonly calls: QueueCalls;
  readonly audit: (fields: Record<string, unknown>) => void;
}

/**
 * Answers the routes under /api/queues/<queue>/messages/<rest…>: the
 * bounded search, and one message's actions (delete, move, send an edited
 * copy). Each is QueueService calls made as the session's token, so the
 * broker checks every permission, as it does over gRPC.
 */
export async function answerMessageRoute(
  request: MessageRequest,
  context: MessageContext,
  queue: string,
  rest: readonly string[],
): Promise<object> {
  const [first, action, ...more] = rest;
  // A trailing "/" (an empty id) names no message.
  if (more.length > 0 || first === undefined || first === "") throw consoleErrors.notFound();
  if (first === "search" && action === undefined) {
    if (request.method !== "GET") throw consoleErrors.methodNotAllowed();
    return search(request, context, queue);
  }
  if (action === undefined) {
    if (request.method !== "DELETE") throw consoleErrors.methodNotAllowed();
    // DiscardMessage checks admin on the queue, and writes its own audit line.
    await context.calls.call("discardMessage", { queue, messageId: first });
    return {};
  }
  if (action === "move") {
    if (request.method !== "POST") throw consoleErrors.methodNotAllowed();
    const destinationQueue = optionalString(objectBody(request.body), "destinationQueue") ?? "";
    // MoveMessage checks admin on the queue and a named destination, and writes its own audit line.
    const moved = await context.calls.call("moveMessage", { queue, messageId: first, destinationQueue });
    return { destinationQueue: moved.destinationQueue };
  }
  if (action === "copy") {
    if (request.method !== "POST") throw consoleErrors.methodNotAllowed();
    return sendCopy(request, context, queue, first);
  }
  throw consoleErrors.notFound();
}

async function search(request: MessageRequest, { calls }: MessageContext, queue: string): Promise<object> {
  const { field, text } = searchQueryOf(request.query);
  const page = await scanQueue(calls, queue, request.query.get("pageToken") ?? "", (message) =>
    messageMatches(message, field, text),
  );
  return { ...page, matches: page.matches.map(peekedMessageView) };
}

/**
 * "Send a copy with this body edited": a Send of a new message with the
 * edited body and the original's attributes, typed attributes and trace
 * header, to `destinationQueue` ("" or missing: the original's dead-letter
 * source). A FIFO copy goes to the original's message group unless the
 * request names another, with a new deduplication id so it is never taken
 * for a duplicate of the original. The original stays where it is.
 */
async function sendCopy(
  request: MessageRequest,
  context: MessageContext,
  queue: string,
  messageId: string,
): Promise<object> {
  const body = objectBody(request.body);
  const text = stringField(body, "body");
  const named = optionalString(body, "destinationQueue") ?? "";
  const groupAsked = optionalString(body, "messageGroupId") ?? "";
  // Where the page saw the message (its page's token): the search for it starts there, so it is found at any depth.
  const near = optionalString(body, "pageToken") ?? "";
  const original = await findMessage(context, queue, messageId, near);
  const destinationQueue = named === "" ? original.deadLetterSourceQueue : named;
  if (destinationQueue === "")
    throw consoleErrors.invalid(
      "destinationQueue",
      "this message came from no dead-letter source: name a queue",
      fieldReasons.required,
    );
  const messageGroupId = groupAsked === "" ? original.messageGroupId : groupAsked;
  const { messageId: newMessageId } = await context.calls.call("send", {
    queue: destinationQueue,
    body: new TextEncoder().encode(text),
    attributes: original.attributes,
    typedAttributes: original.typedAttributes,
    traceHeader: original.traceHeader,
    ...(messageGroupId === "" ? {} : { messageGroupId, deduplicationId: randomUUID() }),
  });
  // Never the token or the body: the principal names who did it, the ids what.
  // Never the body: the ids say what was copied, the caller who did it.
  context.audit({ action: "SendEditedCopy", queue, messageId, destinationQueue, newMessageId });
  return { messageId: newMessageId, destinationQueue };
}

/**
 * The message `messageId` of `queue`, read with PeekMessages from `pageToken`
 * on (bounded as a search is); MESSAGE_NOT_FOUND when it is not there.
 */
async function findMessage(
  { calls }: MessageContext,
  queue: string,
  messageId: string,
  pageToken: string,
): Promise<PeekedMessage> {
  const { matches, scanned } = await scanQueue(
    calls,
    queue,
    pageToken,
    (message) => message.messageId === messageId,
    1,
  );
  const found = matches[0];
  if (found === undefined) throw messageNotFound(queue, messageId, scanned);
  return found;
}

function messageNotFound(queue: string, messageId: string, scanned: number): ConsoleError {
  return new ConsoleError(
    404,
    "MESSAGE_NOT_FOUND",
    `queue "${queue}" has no message "${messageId.slice(0, 100)}" among the ${scanned} messages read: it was deleted, received, moved or expired, or lies further than one search reads`,
  );
}
