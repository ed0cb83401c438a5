import { readFile } from "node:fs/promises";
import { objectWith, parseGrant, parseJsonDocument } from "../../auth/grant-parsing.js";
import { Principal } from "../../auth/permissions.js";

/** One access key of a credentials file: its id, the secret requests are signed with, and the caller it stands for. */
export interface SqsKey {
  readonly accessKeyId: string;
  readonly secret: string;
  readonly principal: Principal;
}

/**
 * A credentials file that cannot be used. The message names the entry and
 * field at fault and never quotes a secret or the file's text.
 */
export class SqsCredentialsError extends Error {
  override readonly name = "SqsCredentialsError";
}

// As the auth file's names: they show up in logs and AccessDenied messages.
const namePattern = /^[A-Za-z0-9_.:@-]{1,100}$/;
// IAM's own constraint on an AccessKeyId (16-128 characters, [\w]): any id AWS
// tooling makes fits, while the placeholders that clients without real
// credentials send ("test", "x", "dummy") cannot be configured, and so never
// let such a client in by accident.
const accessKeyIdPattern = /^[A-Za-z0-9_]{16,128}$/;

/** Reads and checks a credentials file (see parseSqsCredentials) into a keyring that can reload it. Throws SqsCredentialsError. */
export async function readSqsCredentials(path: string): Promise<SqsKeyring> {
  return new SqsKeyring(path, await readKeys(path));
}

/**
 * The access keys SigV4 requests are checked against. The table is swapped
 * whole by `reload`, so a request sees either the old file or the new one.
 */
export class SqsKeyring {
  private keys: ReadonlyMap<string, SqsKey>;
  private reloads: Promise<unknown> = Promise.resolve();

  constructor(
    /** The file `reload` reads again. */
    readonly path: string,
    keys: readonly SqsKey[],
  ) {
    this.keys = byId(keys);
  }

  /** How many keys the current file holds. */
  get keyCount(): number {
    return this.keys.size;
  }

  /** The key with this access key id, by the current file. Key ids are not secret: a plain lookup reveals nothing. */
  find(accessKeyId: string): SqsKey | undefined {
    return this.keys.get(accessKeyId);
  }

  /** Reads the file again; if it is bad, throws SqsCredentialsError and keeps the keys it had. Returns the new key count. */
  reload(): Promise<number> {
    // One at a time: two quick SIGHUPs must not let the older read land last.
    const run = this.reloads.then(async () => {
      this.keys = byId(await readKeys(this.path));
      return this.keys.size;
    });
    this.reloads = run.catch(() => undefined);
    return run;
  }
}

/**
 * Checks a credentials file's text, strictly: unknown fields, duplicate names
 * or key ids, unknown permissions and bad patterns are errors, not ignored,
 * so a typo cannot silently grant or withhold access. Format:
 * {"keys":[{"name":"orders-service","accessKeyId":"AKIA…","secretAccessKey":"…","permissions":[{"queues":"orders-*","allow":["send","receive"]}]}]}
 */
export function parseSqsCredentials(text: string, path: string): SqsKey[] {
  const document = parseJsonDocument(
    text,
    (where) => new SqsCredentialsError(`SQS credentials file ${path} is not valid JSON${where}`),
  );
  const fail = (where: string, problem: string): never => {
    throw new SqsCredentialsError(`SQS credentials file ${path}: ${where} ${problem}`);
  };
  const top = objectWith(document, ["keys"], "the file", fail);
  if (!Array.isArray(top.keys)) return fail("keys", "must be an array");
  const names = new Set<string>();
  const ids = new Map<string, string>();
  return top.keys.map((raw: unknown, index) => {
    const at = `keys[${index}]`;
    const entry = objectWith(raw, ["name", "accessKeyId", "secretAccessKey", "permissions"], at, fail);
    if (typeof entry.name !== "string" || !namePattern.test(entry.name)) {
      fail(`${at}.name`, "must be 1 to 100 characters of A-Z, a-z, 0-9, '_', '.', ':', '@', '-'");
    }
    const name = entry.name as string;
    // Names appear in logs: a secret pasted into the wrong field would too.
    if (name === entry.secretAccessKey)
      fail(`${at}.name`, "is the same as its secretAccessKey, and names are shown in logs");
    const label = `${at} ("${name}")`;
    if (names.has(name)) fail(`${label}.name`, "is used by an earlier entry");
    names.add(name);
    if (typeof entry.accessKeyId !== "string" || !accessKeyIdPattern.test(entry.accessKeyId)) {
      fail(`${label}.accessKeyId`, "must be 16 to 128 characters of A-Z, a-z, 0-9, '_' (as AWS access key ids are)");
    }
    const accessKeyId = entry.accessKeyId as string;
    const twin = ids.get(accessKeyId);
    if (twin !== undefined) fail(`${label}.accessKeyId`, `is also that of "${twin}": one key would be two callers`);
    ids.set(accessKeyId, name);
    if (typeof entry.secretAccessKey !== "string" || entry.secretAccessKey.length === 0) {
      fail(`${label}.secretAccessKey`, "must be a non-empty string");
    }
    const secret = entry.secretAccessKey as string;
    // SDKs trim what they read from files and the environment: such a secret could never be matched.
    if (secret.trim() !== secret) fail(`${label}.secretAccessKey`, "must not begin or end with white space");
    if (!Array.isArray(entry.permissions) || entry.permissions.length === 0) {
      fail(`${label}.permissions`, "must be a non-empty array");
    }
    const grants = (entry.permissions as unknown[]).map((rawGrant, grantIndex) =>
      parseGrant(rawGrant, `${label}.permissions[${grantIndex}]`, fail),
    );
    return { accessKeyId, secret, principal: new Principal(name, grants) };
  });
}

async function readKeys(path: string): Promise<SqsKey[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new SqsCredentialsError(
      `cannot read SQS credentials file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      {
        cause: error,
      },
    );
  }
  return parseSqsCredentials(text, path);
}

function byId(keys: readonly SqsKey[]): ReadonlyMap<string, SqsKey> {
  return new Map(keys.map((key) => [key.accessKeyId, key]));
}
