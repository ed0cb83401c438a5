// The checking shared by the files that grant permissions: the gRPC auth
// file (auth-file.ts) and the SQS access keys' file (src/sqs/auth/): one
// grant language, one strictness.
import { actions, type Action, type Grant } from "./permissions.js";
import { QueuePattern } from "./queue-pattern.js";

/** One `{"queues": pattern, "allow": [actions]}` grant, checked strictly; fails naming the field. */
export function parseGrant(raw: unknown, at: string, fail: (where: string, problem: string) => never): Grant {
  const grant = objectWith(raw, ["queues", "allow"], at, fail);
  if (typeof grant.queues !== "string") return fail(`${at}.queues`, "must be a string");
  const queues = QueuePattern.parse(grant.queues);
  if (typeof queues === "string") return fail(`${at}.queues`, queues);
  if (!Array.isArray(grant.allow) || grant.allow.length === 0) return fail(`${at}.allow`, "must be a non-empty array");
  const allow = new Set<Action>();
  for (const action of grant.allow as unknown[]) {
    if (typeof action !== "string" || !(actions as readonly string[]).includes(action)) {
      return fail(`${at}.allow`, `may hold only ${actions.map((a) => `"${a}"`).join(", ")}`);
    }
    if (allow.has(action as Action)) return fail(`${at}.allow`, `lists "${action}" twice`);
    allow.add(action as Action);
  }
  return { queues, allow };
}

/** `value` as an object with exactly the fields `keys` (each present); fails naming the first one missing or unknown. */
export function objectWith(
  value: unknown,
  keys: readonly string[],
  at: string,
  fail: (where: string, problem: string) => never,
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail(at, "must be an object");
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    // Printed only when it is a short plain field name: a key could be anything, even a token or a secret (AWS's are 40 characters).
    if (!keys.includes(key))
      return fail(at, /^[A-Za-z0-9_]{1,32}$/.test(key) ? `has an unknown field "${key}"` : "has an unknown field");
  }
  for (const key of keys) if (!Object.hasOwn(record, key)) fail(`${at}.${key}`, "is missing");
  return record;
}

function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position).split("\n");
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

/**
 * A permissions file's JSON, or the error `invalid` makes of where it is
 * broken: never JSON.parse's own message, which quotes the text around the
 * fault, and that may be a token or a secret pasted by mistake.
 */
export function parseJsonDocument(text: string, invalid: (where: string) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw invalid(position === undefined ? "" : ` at ${lineAndColumn(text, Number(position))}`);
  }
}
