// How ListQueues pages: the page size's bounds and the page token's form. A
// token names the last queue of its page, so any broker of a cluster can
// resume a listing another one started.

/** Queues per page when the request's page_size is 0. */
export const defaultPageSize = 100;
/** The largest page_size. */
export const maxPageSize = 1000;

/** The page token that resumes a listing after `lastName`. */
export function encodePageToken(lastName: string): string {
  return Buffer.from(`after:${lastName}`, "utf8").toString("base64url");
}

/** The name a page token resumes after, or undefined for a token this service did not make. */
export function decodePageToken(token: string): string | undefined {
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith("after:") || encodePageToken(text.slice(6)) !== token) return undefined;
  return text.slice(6);
}
