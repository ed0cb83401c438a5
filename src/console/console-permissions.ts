import type { AuthGate } from "../auth/auth-gate.js";
import { tokenDigest } from "../auth/bearer-token.js";
import type { Principal } from "../auth/permissions.js";
import type { ConsoleSession } from "./console-sessions.js";

/** What the session's token may do on one queue: the page disables the buttons of what it may not. */
export interface QueuePermissions {
  readonly send: boolean;
  readonly receive: boolean;
  readonly admin: boolean;
}

/** A session's permissions, read once per request from the current auth file. */
export interface SessionPermissions {
  /** What the token may do on `queue`. */
  on(queue: string): QueuePermissions;
  /** Admin on "*": what AdminService's calls (broker status, creating any queue) need. */
  readonly adminEverywhere: boolean;
}

const everything: QueuePermissions = { send: true, receive: true, admin: true };

/** Every permission: a broker without an auth file lets anyone do anything. */
export const allPermissions: SessionPermissions = { on: () => everything, adminEverywhere: true };

/**
 * The permissions of a session's token by the auth file as it is now (a
 * reload may have changed them since sign-in). Throws TOKEN_INVALID when the
 * file no longer holds the token. These only shape the page: every call is
 * still checked by the broker itself.
 */
export function sessionPermissions(gate: AuthGate | undefined, session: ConsoleSession): SessionPermissions {
  if (gate === undefined || session.token === undefined) return allPermissions;
  return principalPermissions(gate.identify(tokenDigest(session.token)).principal);
}

/** What a principal may do, in the page's terms. */
export function principalPermissions(principal: Principal): SessionPermissions {
  return {
    on: (queue) => ({
      send: principal.may("send", queue),
      receive: principal.may("receive", queue),
      admin: principal.may("admin", queue),
    }),
    adminEverywhere: principal.mayOnEveryQueue("admin"),
  };
}
