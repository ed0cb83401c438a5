import { describe, expect, it } from "vitest";
import { ConsoleSessions, csrfMatches } from "../../src/console/console-sessions.js";

const ops = { token: "ops-token", principal: "ops" };

describe("the console's sessions", () => {
  it("finds a session by its id until it has been idle too long, and touches it on each use", () => {
    const sessions = new ConsoleSessions({ idleMs: 1_000, max: 10, maxPerPrincipal: 10 });
    const session = sessions.open(0, ops);
    expect(sessions.find(session.id, 900)).toBe(session);
    // Used at 900, so alive until 1900.
    expect(sessions.find(session.id, 1_800)).toBe(session);
    expect(sessions.find(session.id, 2_801)).toBeUndefined();
    expect(sessions.find(undefined, 0)).toBeUndefined();
    expect(sessions.find("not-a-session", 0)).toBeUndefined();
  });

  it("forgets idle sessions, and the tokens they hold, as soon as anyone uses the console", () => {
    const sessions = new ConsoleSessions({ idleMs: 1_000, max: 10, maxPerPrincipal: 10 });
    sessions.open(0, ops);
    sessions.open(500, { token: "other", principal: "other" });
    expect(sessions.size).toBe(2);
    sessions.find(undefined, 1_200);
    expect(sessions.size).toBe(1);
    sessions.find(undefined, 1_600);
    expect(sessions.size).toBe(0);
  });

  it("caps each token's sessions, so one token cannot sign everyone else out, and caps them all", () => {
    const sessions = new ConsoleSessions({ idleMs: 60_000, max: 5, maxPerPrincipal: 2 });
    const other = sessions.open(0, { token: "other", principal: "other" });
    const first = sessions.open(1, ops);
    for (let i = 0; i < 10; i++) sessions.open(2 + i, ops);
    expect(sessions.find(other.id, 20)).toBe(other);
    expect(sessions.find(first.id, 20)).toBeUndefined();
    expect(sessions.size).toBe(3);
    for (let i = 0; i < 5; i++) sessions.open(30 + i, { token: `t${i}`, principal: `p${i}` });
    expect(sessions.size).toBe(5);
  });

  it("does not cap sessions without a token as one token's: a stranger cannot sign a browser out of a broker without an auth file", () => {
    const sessions = new ConsoleSessions({ idleMs: 60_000, max: 50, maxPerPrincipal: 2 });
    const browser = sessions.open(0, undefined);
    for (let i = 0; i < 10; i++) sessions.open(1 + i, undefined);
    expect(sessions.find(browser.id, 20)).toBe(browser);
  });

  it("matches a CSRF header only to its own session's token", () => {
    const sessions = new ConsoleSessions();
    const a = sessions.open(0, undefined);
    const b = sessions.open(0, undefined);
    expect(csrfMatches(a, a.csrfToken)).toBe(true);
    expect(csrfMatches(a, b.csrfToken)).toBe(false);
    expect(csrfMatches(a, undefined)).toBe(false);
    expect(csrfMatches(a, `${a.csrfToken}x`)).toBe(false);
  });
});
