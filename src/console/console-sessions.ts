import { randomBytes, timingSafeEqual } from "node:crypto";

/** A signed-in browser: the token it signed in with stays here, in the broker's memory, never in the browser. */
export interface ConsoleSession {
  readonly id: string;
  /** Sent back in the X-Holdshelf-Csrf header of every change: a page of another site cannot read it. */
  readonly csrfToken: string;
  /** The bearer token, on a broker with an auth file; undefined on one without. */
  readonly token: string | undefined;
  /** The token's name in the auth file (a label, not a secret). */
  readonly principal: string | undefined;
  /** Sessions not used for this long end. */
  lastUsedAt: number;
}

/** How long an idle session lasts, and how many the broker keeps: in all, and per token. */
export interface SessionLimits {
  readonly idleMs: number;
  readonly max: number;
  /** So that one token's holder cannot sign everyone else out by opening sessions. */
  readonly maxPerPrincipal: number;
}
export const defaultSessionLimits: SessionLimits = { idleMs: 12 * 60 * 60_000, max: 10_000, maxPerPrincipal: 100 };

/**
 * The console's sessions, in memory: a restart signs everyone out. The
 * cookie carries only a random session id; the bearer token a user typed is
 * kept here, so script in the page (or a stolen cookie jar after the
 * session ended) never holds it.
 */
export class ConsoleSessions {
  // Insertion order is age order: the first entry is the one to evict when full.
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(private readonly limits: SessionLimits = defaultSessionLimits) {}

  /** Opens a session for a token (or, without an auth file, for anyone). */
  open(now: number, signedIn: { token: string; principal: string } | undefined): ConsoleSession {
    this.sweep(now);
    // The same token's least recently used session goes first, then anyone's. Sessions
    // without a token (no auth file) are nobody's in particular: only the overall cap holds them.
    if (signedIn !== undefined) {
      const own = [...this.sessions.values()].filter((session) => session.principal === signedIn.principal);
      if (own.length >= this.limits.maxPerPrincipal) this.sessions.delete(own[0]!.id);
    }
    if (this.sessions.size >= this.limits.max) this.sessions.delete(this.sessions.keys().next().value!);
    const session: ConsoleSession = {
      id: randomBytes(32).toString("base64url"),
      csrfToken: randomBytes(32).toString("base64url"),
      token: signedIn?.token,
      principal: signedIn?.principal,
      lastUsedAt: now,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session of a cookie's id, touched; undefined when unknown or idle too long. */
  find(id: string | undefined, now: number): ConsoleSession | undefined {
    this.sweep(now);
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    if (now - session.lastUsedAt > this.limits.idleMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastUsedAt = now;
    // Moved to the end: the map stays in order of last use.
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  close(id: string): void {
    this.sessions.delete(id);
  }

  /** How many sessions are open. */
  get size(): number {
    return this.sessions.size;
  }

  /** Ends idle sessions, so their tokens leave the broker's memory: the map is in order of last use, so they are at its front. */
  private sweep(now: number): void {
    for (const [id, session] of this.sessions) {
      if (now - session.lastUsedAt <= this.limits.idleMs) return;
      this.sessions.delete(id);
    }
  }
}

/** Whether a request's CSRF header matches its session's token, compared in constant time. */
export function csrfMatches(session: ConsoleSession, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(session.csrfToken);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
