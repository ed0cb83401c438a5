import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeToken, type TestToken } from "../security/auth-harness.js";
import { startConsoleHarness, type ConsoleHarness } from "./console-harness.js";

// The page disables what a token may not do from these answers (docs/console.md "Permissions"):
// each queue view's `permissions` and the session's `adminEverywhere`, for every kind of grant.
describe("the console's permission fields", () => {
  let h: ConsoleHarness;
  const tokens: Record<string, TestToken> = {
    root: makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] }),
    sender: makeToken("sender", { queues: "*", allow: ["send"] }),
    receiver: makeToken("receiver", { queues: "jobs", allow: ["receive"] }),
    jobsAdmin: makeToken("jobs-admin", { queues: "jobs", allow: ["admin"] }, { queues: "mail", allow: ["send"] }),
    everywhereAdmin: makeToken("admin-everywhere", { queues: "*", allow: ["admin"] }),
  };
  beforeAll(async () => {
    h = await startConsoleHarness({ tokens: Object.values(tokens) });
    const rpc = h.rpc(tokens.root!.token);
    for (const name of ["jobs", "mail"]) await rpc.createQueue({ name });
  });
  afterAll(() => h.stop());

  /** The session's adminEverywhere, and each listed queue's permissions with GET /api/queues/<name>'s. */
  async function permissionsOf(token: TestToken): Promise<{ adminEverywhere: boolean; queues: object }> {
    const browser = h.browser();
    const session = await browser.signIn(token.token);
    const list = await browser.api("GET", "/api/queues");
    expect(list.status).toBe(200);
    const queues: Record<string, object> = {};
    for (const row of list.body.queues as { name: string; permissions: object }[]) {
      const one = await browser.api("GET", `/api/queues/${row.name}`);
      // The list's row and the queue's own answer agree.
      expect(one.body.queue.permissions).toEqual(row.permissions);
      queues[row.name] = row.permissions;
    }
    // GET /api/session says the same as the sign-in.
    expect((await browser.session()).body.adminEverywhere).toBe(session.body.adminEverywhere);
    return { adminEverywhere: session.body.adminEverywhere, queues };
  }

  it("gives admin on * every permission, and adminEverywhere", async () => {
    expect(await permissionsOf(tokens.root!)).toEqual({
      adminEverywhere: true,
      queues: {
        jobs: { send: true, receive: true, admin: true },
        mail: { send: true, receive: true, admin: true },
      },
    });
  });

  it("gives a send-only token send alone", async () => {
    expect(await permissionsOf(tokens.sender!)).toEqual({
      adminEverywhere: false,
      queues: {
        jobs: { send: true, receive: false, admin: false },
        mail: { send: true, receive: false, admin: false },
      },
    });
  });

  it("gives a receive-only token receive alone, on the one queue it sees", async () => {
    expect(await permissionsOf(tokens.receiver!)).toEqual({
      adminEverywhere: false,
      queues: { jobs: { send: false, receive: true, admin: false } },
    });
  });

  it("gives admin on one queue admin there only, and no adminEverywhere", async () => {
    expect(await permissionsOf(tokens.jobsAdmin!)).toEqual({
      adminEverywhere: false,
      queues: {
        jobs: { send: false, receive: false, admin: true },
        mail: { send: true, receive: false, admin: false },
      },
    });
  });

  it("gives admin alone on * adminEverywhere without send or receive", async () => {
    expect(await permissionsOf(tokens.everywhereAdmin!)).toEqual({
      adminEverywhere: true,
      queues: {
        jobs: { send: false, receive: false, admin: true },
        mail: { send: false, receive: false, admin: true },
      },
    });
  });
});

describe("the console's permission fields without an auth file", () => {
  it("gives everyone every permission", async () => {
    const h = await startConsoleHarness();
    try {
      const browser = h.browser();
      expect((await browser.session()).body.adminEverywhere).toBe(true);
      expect((await browser.api("POST", "/api/queues", { name: "jobs" })).body.queue.permissions).toEqual({
        send: true,
        receive: true,
        admin: true,
      });
      expect((await browser.api("GET", "/api/queues")).body.queues[0].permissions).toEqual({
        send: true,
        receive: true,
        admin: true,
      });
    } finally {
      await h.stop();
    }
  });
});
