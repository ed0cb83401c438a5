import { readFile } from "node:fs/promises";
import { tokenPrefix } from "./bearer-token.js";
import { actions, Principal, type Action, type Grant } from "./permissions.js";
import { QueuePattern } from "./queue-pattern.js";

/** One token of an auth file: the digest it is known by and the caller it stands for. */
export interface TokenEntry {
  readonly digest: Buffer;
  readonly principal: Principal;
}

/**
 * An auth file that cannot be used. The message names the entry and field
 * at fault and never quotes a hash, a token or the file's text.
 */
export class AuthFileError extends Error {
  override readonly name = "AuthFileError";
}

// Labels show up in logs and PERMISSION_DENIED messages: keep them short and printable.
const namePattern = /^[A-Za-z0-9_.:@-]{1,100}$/;
const digestPattern = /^[0-9a-fA-F]{64}$/;

/** Reads and checks an auth file (see parseAuthFile). Throws AuthFileError. */
export async function readAuthFile(path: string): Promise<TokenEntry[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new AuthFileError(`cannot read auth file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, { cause: error });
  }
  return parseAuthFile(text, path);
}

/**
 * Checks an auth file's text, strictly: unknown fields, duplicate names or
 * hashes, unknown permissions and bad patterns are errors, not ignored, so a
 * typo cannot silently grant or withhold access. Format:
 * {"tokens":[{"name":"orders-worker","sha256":"<64 hex>","permissions":[{"queues":"orders-*","allow":["send","receive"]}]}]}
 */
export function parseAuthFile(text: string, path: string): TokenEntry[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    // JSON.parse's own message quotes the text around the fault, which may be a token pasted by mistake.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    const where = position === undefined ? "" : ` at ${lineAndColumn(text, Number(position))}`;
    throw new AuthFileError(`auth file ${path} is not valid JSON${where}`);
  }
  const fail = (where: string, problem: string): never => {
    throw new AuthFileError(`auth file ${path}: ${where} ${problem}`);
  };
  const top = objectWith(document, ["tokens"], "the file", fail);
  if (!Array.isArray(top.tokens)) return fail("tokens", "must be an array");
  const names = new Set<string>();
  const digests = new Map<string, string>();
  return top.tokens.map((raw: unknown, index) => {
    const at = `tokens[${index}]`;
    const entry = objectWith(raw, ["name", "sha256", "permissions"], at, fail);
    if (typeof entry.name !== "string" || !namePattern.test(entry.name)) {
      fail(`${at}.name`, "must be 1 to 100 characters of A-Z, a-z, 0-9, '_', '.', ':', '@', '-'");
    }
    const name = entry.name as string;
    // Names appear in logs and PERMISSION_DENIED messages: a token pasted here would too.
    if (name.startsWith(tokenPrefix)) fail(`${at}.name`, `must not start with "${tokenPrefix}": it looks like a token, and names are shown in logs`);
    const label = `${at} ("${name}")`;
    if (names.has(name)) fail(`${label}.name`, "is used by an earlier entry");
    names.add(name);
    if (typeof entry.sha256 !== "string" || !digestPattern.test(entry.sha256)) {
      fail(`${label}.sha256`, "must be 64 hex digits (the SHA-256 of the token, as `holdshelf token` prints it)");
    }
    const hex = (entry.sha256 as string).toLowerCase();
    const twin = digests.get(hex);
    if (twin !== undefined) fail(`${label}.sha256`, `is the same as that of "${twin}": one token would be two callers`);
    digests.set(hex, name);
    if (!Array.isArray(entry.permissions) || entry.permissions.length === 0) {
      fail(`${label}.permissions`, "must be a non-empty array");
    }
    const grants = (entry.permissions as unknown[]).map((rawGrant, grantIndex) =>
      parseGrant(rawGrant, `${label}.permissions[${grantIndex}]`, fail),
    );
    return { digest: Buffer.from(hex, "hex"), principal: new Principal(name, grants) };
  });
}

function parseGrant(raw: unknown, at: string, fail: (where: string, problem: string) => never): Grant {
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
function objectWith(
  value: unknown,
  keys: readonly string[],
  at: string,
  fail: (where: string, problem: string) => never,
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail(at, "must be an object");
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    // Printed only when it is a plain field name: a key could be anything, even a token.
    if (!keys.includes(key)) return fail(at, /^[A-Za-z0-9_]{1,40}$/.test(key) ? `has an unknown field "${key}"` : "has an unknown field");
  }
  for (const key of keys) if (!Object.hasOwn(record, key)) fail(`${at}.${key}`, "is missing");
  return record;
}

function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position).split("\n");
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}
