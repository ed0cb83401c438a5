import type { PeekedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import type { QueueCalls } from "../service/queue-calls.js";
import { consoleErrors, fieldReasons } from "./console-error.js";

/** What a search compares its text with: the message id, the body's text, or the attributes. */
export type SearchField = "id" | "body" | "attribute";

const searchFields: readonly SearchField[] = ["id", "body", "attribute"];

/**
 * A search reads at most this many messages, in PeekMessages pages of 100:
 * its cost is bounded whatever the queue's depth, and nextPageToken goes on.
 */
export const searchScanLimit = 10_000;
// PeekMessages' largest page.
const scanPageSize = 100;
// A page of up to 4 MiB (large bodies) still counts as a page: at most this many calls a search.
const scanPageLimit = searchScanLimit / scanPageSize;
/** A search stops after the page that brings its matches to this many: one answer stays small. */
export const searchMatchLimit = 100;

// Bodies that are not UTF-8 have no text to search.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The search's field and text, from the route's query; refused with INVALID_ARGUMENT naming `field` or `q`. */
export function searchQueryOf(query: URLSearchParams): { field: SearchField; text: string } {
  const field = query.get("field") ?? "";
  if (!(searchFields as readonly string[]).includes(field))
    throw consoleErrors.invalid(
      "field",
      `must be one of ${searchFields.map((f) => `"${f}"`).join(", ")}`,
      fieldReasons.notAChoice,
    );
  const text = query.get("q") ?? "";
  if (text === "") throw consoleErrors.invalid("q", "enter the text to search for", fieldReasons.required);
  return { field: field as SearchField, text };
}

/**
 * Whether a message matches: a case-insensitive substring of its id, of its
 * body (only a body that is valid UTF-8 has text), or of an attribute. For
 * attributes, "name=value" matches an attribute whose name holds "name" and
 * whose value holds "value" (either may be empty), and text without "="
 * matches a name or a value; typed attributes count, a binary value by its
 * bytes as UTF-8 text when they are that.
 */
export function messageMatches(message: PeekedMessage, field: SearchField, text: string): boolean {
  const wanted = text.toLowerCase();
  const holds = (value: string, part: string) => value.toLowerCase().includes(part);
  if (field === "id") return holds(message.messageId, wanted);
  if (field === "body") {
    const body = textOf(message.body);
    return body !== null && holds(body, wanted);
  }
  const equals = wanted.indexOf("=");
  const [name, value] = equals === -1 ? [wanted, wanted] : [wanted.slice(0, equals), wanted.slice(equals + 1)];
  return attributesOf(message).some(([key, item]) =>
    equals === -1
      ? holds(key, name) || (item !== null && holds(item, value))
      : holds(key, name) && item !== null && holds(item, value),
  );
}

/** One search's answer: the matches, how many messages it read, its bound, and where to go on ("" at the end). */
export interface SearchPage {
  readonly matches: PeekedMessage[];
  readonly scanned: number;
  readonly scanLimit: number;
  readonly nextPageToken: string;
}

/**
 * Reads the queue from `pageToken` with PeekMessages (nothing is leased or
 * counted) until its end, `searchScanLimit` messages, or the page that
 * brings its matches to `matchLimit`, and keeps the messages `matches` picks. Each page is one call,
 * forwarded to the queue's owner in cluster mode.
 */
export async function scanQueue(
  calls: Pick<QueueCalls, "call">,
  queue: string,
  pageToken: string,
  matches: (message: PeekedMessage) => boolean,
  matchLimit = searchMatchLimit,
): Promise<SearchPage> {
  const found: PeekedMessage[] = [];
  let scanned = 0;
  let pages = 0;
  let token = pageToken;
  do {
    const page = await calls.call("peekMessages", {
      queue,
      pageSize: Math.min(scanPageSize, searchScanLimit - scanned),
      pageToken: token,
    });
    scanned += page.messages.length;
    pages += 1;
    found.push(...page.messages.filter(matches));
    token = page.nextPageToken;
  } while (token !== "" && scanned < searchScanLimit && pages < scanPageLimit && found.length < matchLimit);
  return { matches: found, scanned, scanLimit: searchScanLimit, nextPageToken: token };
}

function textOf(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Every attribute as name and text (null for a binary value that is not UTF-8). */
function attributesOf(message: PeekedMessage): [string, string | null][] {
  return [
    ...Object.entries(message.attributes),
    ...Object.entries(message.typedAttributes).map(([name, typed]): [string, string | null] => [
      name,
      typed.value.case === "binaryValue" ? textOf(typed.value.value) : (typed.value.value ?? ""),
    ]),
  ];
}
