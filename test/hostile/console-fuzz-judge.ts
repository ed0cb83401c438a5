import { isIP } from "node:net";
import { reasonCodes } from "../../src/protocol/error-reasons.js";
import type { RawAnswer } from "./sqs-fuzz-wire.js";
import { leakIn } from "./error-leaks.js";

// How the fuzz test judges the console's answers (docs/console.md "The page's API").

/** Every reason a console error may carry: the console's own and the broker's; never INTERNAL, which only a bug produces. */
export const stableReasons: ReadonlySet<string> = new Set([
  "SESSION_REQUIRED",
  "CSRF_TOKEN_INVALID",
  "HOST_NOT_ALLOWED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "REQUEST_TOO_LARGE",
  ...Object.keys(reasonCodes).filter((reason) => reason !== "INTERNAL"),
]);

/** A console error answer, read. */
export interface ConsoleErrorAnswer {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly fields: readonly { field: string; reason: string; message: string }[];
}

/** The error `answer` carries, or why it is no well-formed 4xx console error. A HEAD answer has no body to judge. */
export function readConsoleError(answer: RawAnswer, method: string): ConsoleErrorAnswer | string {
  const show = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.text.slice(0, 500)}`;
  if (answer.status < 400 || answer.status > 499) return `status ${answer.status}, not 4xx: ${show}`;
  if (answer.headers["content-type"] !== "application/json; charset=utf-8")
    return `content-type ${answer.headers["content-type"]}: ${show}`;
  if (answer.headers["x-content-type-options"] !== "nosniff" || answer.headers["cache-control"] !== "no-store")
    return `security headers missing: ${show}`;
  if (method === "HEAD") return { status: answer.status, reason: "", message: "", fields: [] };
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `the error is not JSON: ${show}`;
  }
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (
    typeof body !== "object" ||
    body === null ||
    Object.keys(body).join() !== "error" ||
    typeof error !== "object" ||
    error === null
  )
    return `not {"error": …}: ${show}`;
  if (Object.keys(error).sort().join() !== "fields,message,reason") return `the error's members: ${show}`;
  const { reason, message, fields } = error;
  if (typeof reason !== "string" || !stableReasons.has(reason))
    return `reason ${JSON.stringify(reason)} is no stable reason: ${show}`;
  if (typeof message !== "string" || message === "") return `message: ${show}`;
  const leak = leakIn(message);
  if (leak !== undefined) return `the message leaks ${leak}: ${show}`;
  if (
    !Array.isArray(fields) ||
    !fields.every(
      (f) =>
        typeof f?.field === "string" &&
        typeof f?.reason === "string" &&
        /^[A-Z][A-Z_]*$/.test(f.reason) &&
        typeof f?.message === "string" &&
        Object.keys(f).length === 3,
    )
  ) {
    return `fields: ${show}`;
  }
  return { status: answer.status, reason, message, fields };
}

/** Node's own refusal of a request its HTTP parser cannot read (an unknown method, a head over 16 KiB): a bare 400 or 431, before the console sees it. */
export function isParserRefusal(answer: RawAnswer): boolean {
  return (
    (answer.status === 400 || answer.status === 431) &&
    answer.headers["content-type"] === undefined &&
    answer.body.length === 0
  );
}

/**
 * The path as the console routes it: the URL's path after resolving dots
 * (which the WHATWG URL parser does, %2e%2e included), and under /api/ its
 * segments decoded; undefined where a segment is no valid percent-encoding.
 * A mirror of src/console/console-listener.ts, to know what a request aims at.
 */
export function routedPath(rawPath: string): { pathname: string; segments: string[] | undefined } {
  // Prefixed, not resolved against a base, as the listener does: "//x/api" stays a path, not a host.
  const { pathname } = new URL(`http://console.invalid${rawPath}`);
  if (!pathname.startsWith("/api/")) return { pathname, segments: undefined };
  try {
    return {
      pathname,
      segments: pathname
        .slice("/api/".length)
        .split("/")
        .map((segment) => decodeURIComponent(segment)),
    };
  } catch {
    return { pathname, segments: undefined };
  }
}

/** Whether the console serves a request with this Host without an auth file: localhost or an IP literal, as src/console/console-listener.ts decides. */
export function isOwnHost(host: string): boolean {
  const name = host
    .replace(/:\d+$/, "")
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase();
  return name === "localhost" || isIP(name) !== 0;
}
