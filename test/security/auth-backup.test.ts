// `holdshelf backup` against a broker with an auth file: a backup holds every
// queue's messages and the key that signs receipt handles, so only a token
// with admin on "*" gets one; a token scoped to some queues, or without admin,
// is refused with PERMISSION_DENIED and leaves no file.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../src/cli/main.js";
import { makeTempDir } from "../support/temp-dir.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const operator = makeToken("operator", { queues: "*", allow: ["admin"] });
const teamAdmin = makeToken("team-admin", { queues: "work*", allow: ["admin", "send", "receive"] });
const worker = makeToken("worker", { queues: "*", allow: ["send", "receive"] });

describe("holdshelf backup with tokens", () => {
  let h: AuthHarness;
  let out: { path: string; remove(): Promise<void> };
  beforeEach(async () => {
    h = await startAuthHarness([operator, teamAdmin, worker]);
    out = await makeTempDir();
  });
  afterEach(async () => {
    await h.stop();
    await out.remove();
  });

  async function backupWith(token: string | undefined): Promise<{ code: number; stderr: string }> {
    const err: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
    try {
      const env = { HOLDSHELF_ADDRESS: h.server.address, ...(token === undefined ? {} : { HOLDSHELF_TOKEN: token }) };
      const code = await main(["backup", join(out.path, "backup.hsb")], env);
      return { code, stderr: err.join("\n") };
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  }

  it("gives a backup to a token with admin on every queue", async () => {
    expect(await backupWith(operator.token)).toEqual({ code: 0, stderr: "" });
    expect(await readdir(out.path)).toEqual(["backup.hsb"]);
  });

  it.each([
    [
      "admin on some queues",
      teamAdmin.token,
      /^holdshelf: PERMISSION_DENIED: token "team-admin" has no admin permission on every queue/,
    ],
    ["no admin", worker.token, /^holdshelf: PERMISSION_DENIED: token "worker" has no admin permission on every queue/],
    ["no token", undefined, /^holdshelf: TOKEN_MISSING: /],
  ])("refuses a token with %s, leaving no file", async (_, token, message) => {
    const run = await backupWith(token);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(await readdir(out.path)).toEqual([]);
  });
});
