import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { generateToken } from "../../src/auth/bearer-token.js";
import { createLogger } from "../../src/logging/logger.js";
import { makeToken, type TestToken } from "../security/auth-harness.js";
import { getWithHost, startConsoleHarness, type ConsoleHarness } from "./console-harness.js";

describe("the console on a broker with an auth file", () => {
  let h: ConsoleHarness;
  let ops: TestToken;
  let sender: TestToken;
  beforeEach(async () => {
    ops = makeToken("ops", { queues: "*", allow: ["admin", "send", "receive"] });
    sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });
    h = await startConsoleHarness({ tokens: [ops, sender] });
    const admin = h.rpc(ops.token);
    for (const name of ["orders-1", "billing"]) await admin.createQueue({ name });
  });
  afterEach(() => h.stop());

  it("asks for a token, refuses a wrong one, and keeps the right one out of the browser", async () => {
    const browser = h.browser();
    const first = await browser.session();
    expect(first.body).toEqual({
      authRequired: true,
      signedIn: false,
      principal: null,
      csrfToken: null,
      adminEverywhere: false,
    });
    // No cookie before sign-in: nothing to steal.
    expect(first.headers.get("set-cookie")).toBeNull();
    expect((await browser.api("GET", "/api/queues")).body.error.reason).toBe("SESSION_REQUIRED");
    const wrong = await browser.signIn("not-a-token");
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.reason).toBe("TOKEN_INVALID");
    expect((await browser.signIn("")).body.error.fields).toEqual([
      { field: "token", reason: "REQUIRED", message: "enter an access token" },
    ]);

    const signedIn = await browser.signIn(ops.token);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ authRequired: true, signedIn: true, principal: "ops" });
    const cookie = signedIn.headers.get("set-cookie")!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict$/);
    // The cookie is a random session id: the token is in neither the cookie nor any answer.
    expect(cookie).not.toContain(ops.token);
    expect(JSON.stringify(signedIn.body)).not.toContain(ops.token);
    expect((await browser.api("GET", "/api/queues")).body.queues.map((q: { name: string }) => q.name)).toEqual([
      "billing",
      "orders-1",
    ]);
  });

  it("shows a send-only token only its queues, and refuses it every destructive action with PERMISSION_DENIED", async () => {
    const browser = h.browser();
    await browser.signIn(sender.token);
    expect((await browser.api("GET", "/api/queues")).body.queues.map((q: { name: string }) => q.name)).toEqual([
      "orders-1",
    ]);
    // It may send.
    expect((await browser.api("POST", "/api/queues/orders-1/messages", { body: "paid" })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/api/queues/orders-1/purge", {}],
      ["DELETE", "/api/queues/orders-1", undefined],
      ["PUT", "/api/queues/orders-1", { config: {} }],
      ["POST", "/api/queues", { name: "orders-2" }],
      ["GET", "/api/queues/orders-1/messages", undefined],
      ["POST", "/api/queues/orders-1/move-tasks", {}],
      ["GET", "/api/queues/orders-1/move-tasks", undefined],
    ] as const) {
      const refused = await browser.api(method, path, body);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.error.reason).toBe("PERMISSION_DENIED");
      expect(refused.body.error.message).toContain('"orders-sender"');
    }
    // A queue it has no permission on is refused the same, whether it exists or not.
    expect((await browser.api("GET", "/api/queues/billing")).body.error.reason).toBe("PERMISSION_DENIED");
    expect((await browser.api("GET", "/api/queues/absent")).body.error.reason).toBe("PERMISSION_DENIED");
    const stats = (await h.rpc(ops.token).getQueue({ name: "orders-1" })).queue!.stats!;
    expect(stats.visible).toBe(1n);
  });

  it("ends a session whose token was revoked, and signs out", async () => {
    const browser = h.browser();
    await browser.signIn(sender.token);
    await h.writeTokens([ops]);
    const revoked = await browser.api("GET", "/api/queues");
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toMatchObject({
      reason: "SESSION_REQUIRED",
      message: expect.stringContaining("no longer valid"),
    });
    expect((await browser.session()).body.signedIn).toBe(false);

    const admin = h.browser();
    await admin.signIn(ops.token);
    const signOutWithoutCsrf = await admin.api("DELETE", "/api/session", undefined, { "x-holdshelf-csrf": "" });
    expect(signOutWithoutCsrf.body.error.reason).toBe("CSRF_TOKEN_INVALID");
    const signedOut = await admin.api("DELETE", "/api/session");
    expect(signedOut.headers.get("set-cookie")).toMatch(/^holdshelf_console=; Path=\/; Max-Age=0/);
    expect((await admin.api("GET", "/api/queues")).body.error.reason).toBe("SESSION_REQUIRED");
  });

  it("answers under any host name, since without a token a rebound page can do nothing", async () => {
    const answer = await getWithHost(h.consoleUrl, "/api/session", "queues.example.com");
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ authRequired: true, signedIn: false });
  });

  it("never writes a token to the log, signed in, refused or revoked", async () => {
    const lines: string[] = [];
    const logged = await startConsoleHarness({
      tokens: [ops, sender],
      logger: createLogger({ level: "debug", write: (line) => lines.push(line) }),
    });
    try {
      const wrong = generateToken();
      const browser = logged.browser();
      await browser.signIn(wrong);
      // A real token pasted with a stray newline or a smart quote: refused, and still never logged.
      for (const pasted of [`${ops.token}\n`, `${ops.token}é`, `“${ops.token}”`]) {
        const refused = await browser.signIn(pasted);
        expect(refused.status).toBe(401);
        expect(refused.body.error.reason).toBe("TOKEN_INVALID");
        expect(JSON.stringify(refused.body)).not.toContain(ops.token);
      }
      await browser.signIn(ops.token);
      await browser.api("POST", "/api/queues", { name: "jobs" });
      await browser.api("GET", "/api/queues/jobs/messages");
      const limited = logged.browser();
      await limited.signIn(sender.token);
      await limited.api("POST", "/api/queues/jobs/purge", {});
      await logged.writeTokens([ops]);
      await limited.api("GET", "/api/queues");
      expect(lines.length).toBeGreaterThan(0);
      for (const secret of [ops.token, sender.token, wrong, ops.entry.sha256, sender.entry.sha256]) {
        expect(lines.filter((line) => line.includes(secret))).toEqual([]);
      }
    } finally {
      await logged.stop();
    }
  });
});
