import { timingSafeEqual } from "node:crypto";
import type { Metadata } from "@grpc/grpc-js";
import { queueNamePattern } from "../protocol/queue-name-pattern.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { readAuthFile, type TokenEntry } from "./auth-file.js";
import { tokenDigest } from "./bearer-token.js";
import type { Action, Principal } from "./permissions.js";

/** A caller the gate let in: who it is, and the digest to look its token up by again (never the token). */
export interface Caller {
  readonly principal: Principal;
  readonly digest: Buffer;
}

/**
 * Decides who a call comes from: reads the bearer token of its metadata and
 * finds it among the auth file's tokens. The table is swapped whole by
 * `reload`, so a call sees either the old file or the new one, never a mix.
 */
export class AuthGate {
  private reloads: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly path: string,
    private entries: readonly TokenEntry[],
  ) {}

  /** Reads the auth file at `path`. Throws AuthFileError. */
  static async open(path: string): Promise<AuthGate> {
    return new AuthGate(path, await readAuthFile(path));
  }

  /** How many tokens the current file holds. */
  get tokenCount(): number {
    return this.entries.length;
  }

  /** Reads the file again; if it is bad, throws AuthFileError and keeps the tokens it had. Returns the new token count. */
  reload(): Promise<number> {
    // One at a time: two quick SIGHUPs must not let the older read land last.
    const run = this.reloads.then(async () => {
      this.entries = await readAuthFile(this.path);
      return this.entries.length;
    });
    this.reloads = run.catch(() => undefined);
    return run;
  }

  /** The caller whose token the metadata carries. Throws TOKEN_MISSING or TOKEN_INVALID. */
  authenticate(metadata: Metadata): Caller {
    const values = metadata.get("authorization");
    if (values.length === 0) {
      throw new HoldshelfError(
        "TOKEN_MISSING",
        'this broker requires a bearer token: send metadata "authorization: Bearer <token>"',
      );
    }
    const token = values.length === 1 && typeof values[0] === "string" ? bearerToken(values[0]) : undefined;
    if (token === undefined) {
      throw new HoldshelfError(
        "TOKEN_INVALID",
        'the authorization metadata must be one value of the form "Bearer <token>"',
      );
    }
    return this.identify(tokenDigest(token));
  }

  /** The caller of a digest, by the current file: a long stream's token may have been revoked since it opened. */
  identify(digest: Buffer): Caller {
    // Every entry is compared, in constant time, whatever matched: the time
    // taken says nothing about which tokens exist or how close a guess came.
    let found: TokenEntry | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry;
    }
    if (found === undefined) throw new HoldshelfError("TOKEN_INVALID", "the bearer token is not valid");
    return { principal: found.principal, digest };
  }
}

/**
 * PERMISSION_DENIED unless the caller may do `action` ("see": any action) on
 * `queue`; checked before the queue is looked up, so it reveals nothing.
 */
export function requirePermission(principal: Principal, action: Action | "see", queue: string, field: string): void {
  if (action === "see" ? principal.canSee(queue) : principal.may(action, queue)) return;
  // Only a well-formed queue name is quoted back: anything else is the caller's junk, and could be anything.
  throw new HoldshelfError(
    "PERMISSION_DENIED",
    `token "${principal.name}" has no ${action === "see" ? "" : `${action} `}permission on ${queueNamePattern.test(queue) ? `queue "${queue}"` : "that queue name"} (${field})`,
  );
}

/** The token of "Bearer <token>" (scheme in any case, as RFC 6750 allows), or undefined. */
function bearerToken(value: string): string | undefined {
  const match = /^bearer +([\x21-\x7e]+)$/i.exec(value);
  return match?.[1];
}
