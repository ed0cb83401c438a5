// How PeekMessages pages: the page size's bounds and the page token's form.
// A token is a cursor naming the last message of its page by arrival time
// and id, not an offset, so that messages deleted between two pages shift
// nothing, and any broker of a cluster can resume a listing another began.

/** Messages per page when the request's page_size is 0. */
export const defaultPeekPageSize = 10;
/** The largest page_size. */
export const maxPeekPageSize = 100;

/** Where a page resumes: after the message with this arrival time and id (32 hex digits). */
export interface PeekCursor {
  readonly enqueuedAt: number;
  readonly id: string;
}

const tokenPattern = /^peek-after:(\d{1,16}):([0-9a-f]{32})$/;

/** The page token that resumes a listing after a message. */
export function encodePeekToken(cursor: PeekCursor): string {
  return Buffer.from(`peek-after:${cursor.enqueuedAt}:${cursor.id}`, "utf8").toString("base64url");
}

/** The cursor a page token names, or undefined for a token this service did not make. */
export function decodePeekToken(token: string): PeekCursor | undefined {
  const match = tokenPattern.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (match === null) return undefined;
  const cursor = { enqueuedAt: Number(match[1]), id: match[2]! };
  // base64url decoding skips what it cannot read: only the one spelling of a cursor is a token.
  return encodePeekToken(cursor) === token ? cursor : undefined;
}
