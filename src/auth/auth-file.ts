import { readFile } from "node:fs/promises";
import { tokenPrefix } from "./bearer-token.js";
import { objectWith, parseGrant, parseJsonDocument } from "./grant-parsing.js";
import { Principal } from "./permissions.js";

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
    throw new AuthFileError(`cannot read auth file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, {
      cause: error,
    });
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
  const document = parseJsonDocument(text, (where) => new AuthFileError(`auth file ${path} is not valid JSON${where}`));
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
    if (name.startsWith(tokenPrefix))
      fail(`${at}.name`, `must not start with "${tokenPrefix}": it looks like a token, and names are shown in logs`);
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
