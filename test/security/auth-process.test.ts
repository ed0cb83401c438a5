// The operator's side of authentication, through the real `holdshelf`
// command: `holdshelf token` makes the token and its entry, `serve
// --auth-file` refuses a bad file at start (exit 1, naming the problem),
// SIGHUP swaps in a new file (or keeps the old one if the new one is bad),
// and the client commands send HOLDSHELF_TOKEN or --token.
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tokenDigest } from "../../src/auth/bearer-token.js";
import { runHoldshelf, startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { makeTempDir } from "../support/temp-dir.js";
import { authFileText, makeToken } from "./auth-harness.js";

// Log lines can take a while on a loaded 2-core machine: wait generously.
const logWait = { timeout: 15_000, interval: 50 };
// Each test spawns several node processes (a broker and CLI calls): minutes, not seconds, under load.
const processTimeout = 120_000;

describe("holdshelf token, serve --auth-file and SIGHUP", { timeout: processTimeout }, () => {
  let dir: Awaited<ReturnType<typeof makeTempDir>>;
  let broker: BrokerProcess | undefined;
  afterEach(async () => {
    if (broker !== undefined && broker.child.exitCode === null) {
      broker.child.kill("SIGKILL");
      await once(broker.child, "exit");
    }
    broker = undefined;
    await dir.remove();
  });

  it("makes a token and prints it once with an entry that holds only its hash", async () => {
    dir = await makeTempDir();
    const made = await runHoldshelf([
      "token",
      "--name",
      "orders-worker",
      "--queues",
      "orders-*",
      "--allow",
      "send,receive",
    ]);
    expect(made.code).toBe(0);
    const { token, entry } = JSON.parse(made.stdout) as { token: string; entry: { sha256: string } };
    expect(token).toMatch(/^hs_[A-Za-z0-9_-]{43}$/);
    expect(entry).toEqual({
      name: "orders-worker",
      sha256: tokenDigest(token).toString("hex"),
      permissions: [{ queues: "orders-*", allow: ["send", "receive"] }],
    });
    expect(made.stderr).toContain("not shown again");
    expect(made.stderr).not.toContain(token);
  });

  it.each([
    [["--name", "w", "--queues", "*"], "token needs --name NAME --queues PATTERN --allow"],
    [
      ["--name", "w", "--queues", "*", "--allow", "write"],
      'permissions[0].allow may hold only "admin", "send", "receive"',
    ],
    [["--name", "w", "--queues", "orders/*", "--allow", "send"], "permissions[0].queues may contain only"],
    [["--name", "has space", "--queues", "*", "--allow", "send"], "name must be 1 to 100 characters"],
  ])("refuses a token command with bad flags (%j)", async (flags, message) => {
    dir = await makeTempDir();
    const made = await runHoldshelf(["token", ...flags]);
    expect(made.code).toBe(2);
    expect(made.stderr).toContain(message);
    expect(made.stdout).toBe("");
  });

  it("serves the tokens of the file, reloads it on SIGHUP, and keeps it when the new one is bad", async () => {
    dir = await makeTempDir();
    const authFile = join(dir.path, "auth.json");
    const made = JSON.parse(
      (await runHoldshelf(["token", "--name", "admin", "--queues", "*", "--allow", "admin,send,receive"])).stdout,
    ) as {
      token: string;
      entry: object;
    };
    await writeFile(authFile, JSON.stringify({ tokens: [made.entry] }));
    broker = await startBrokerProcess(join(dir.path, "data"), ["--auth-file", authFile]);
    expect(broker.logs()).toMatch(/"msg":"auth file loaded","path":"[^"]+","tokens":1/);
    const cli = (args: string[], env: Record<string, string> = {}) =>
      runHoldshelf([...args, "--address", broker!.address], env);

    const created = await cli(["queue", "create", "orders-1"], { HOLDSHELF_TOKEN: made.token });
    expect(created.code, created.stderr).toBe(0);
    expect((await cli(["send", "orders-1", "hello", "--token", made.token])).code).toBe(0);
    const anonymous = await cli(["send", "orders-1", "hello"], { HOLDSHELF_TOKEN: "" });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/^holdshelf: TOKEN_MISSING: /);

    // A new file: the old token stops working, the new one works, calls need no restart.
    const next = makeToken("orders-worker", { queues: "orders-*", allow: ["send"] });
    await writeFile(authFile, authFileText([next]));
    broker.child.kill("SIGHUP");
    await vi.waitFor(
      () => expect(broker!.logs()).toMatch(/"msg":"auth file reloaded","path":"[^"]+","tokens":1/),
      logWait,
    );
    const old = await cli(["queue", "list"], { HOLDSHELF_TOKEN: made.token });
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/^holdshelf: TOKEN_INVALID: /);
    expect((await cli(["send", "orders-1", "again"], { HOLDSHELF_TOKEN: next.token })).code).toBe(0);
    const forbidden = await cli(["receive", "orders-1"], { HOLDSHELF_TOKEN: next.token });
    expect(forbidden.stderr).toMatch(/^holdshelf: PERMISSION_DENIED: token "orders-worker" has no receive permission/);

    // A bad file: logged with the problem, and the tokens in use stay.
    await writeFile(
      authFile,
      JSON.stringify({ tokens: [{ ...next.entry, permissions: [{ queues: "orders-*", allow: ["sned"] }] }] }),
    );
    broker.child.kill("SIGHUP");
    await vi.waitFor(
      () => expect(broker!.logs()).toContain('"msg":"auth file reload failed; keeping the tokens in use"'),
      logWait,
    );
    expect(broker.logs()).toContain('tokens[0] (\\"orders-worker\\").permissions[0].allow may hold only');
    expect((await cli(["send", "orders-1", "still"], { HOLDSHELF_TOKEN: next.token })).code).toBe(0);
    expect(broker.child.exitCode).toBeNull();

    for (const secret of [made.token, next.token, next.entry.sha256, tokenDigest(made.token).toString("hex")]) {
      expect(broker.logs()).not.toContain(secret);
    }
    broker.child.kill("SIGTERM");
    const [code] = (await once(broker.child, "exit")) as [number];
    expect(code).toBe(0);
  });

  it("takes the auth file from HOLDSHELF_AUTH_FILE, and may then listen beyond loopback", async () => {
    dir = await makeTempDir();
    const authFile = join(dir.path, "auth.json");
    const admin = makeToken("admin", { queues: "*", allow: ["admin"] });
    await writeFile(authFile, authFileText([admin]));
    const open = await runHoldshelf([
      "serve",
      "--data-dir",
      join(dir.path, "open"),
      "--listen",
      "0.0.0.0:0",
      "--metrics-listen",
      "off",
    ]);
    expect(open.code).toBe(1);
    expect(open.stderr).toContain("--auth-file");
    // The child inherits the environment as it is when spawned.
    process.env.HOLDSHELF_AUTH_FILE = authFile;
    try {
      broker = await startBrokerProcess(join(dir.path, "data"), ["--listen", "0.0.0.0:0", "--metrics-listen", "off"]);
    } finally {
      delete process.env.HOLDSHELF_AUTH_FILE;
    }
    const port = broker.address.slice(broker.address.lastIndexOf(":") + 1);
    const listed = await runHoldshelf(["queue", "list", "--address", `127.0.0.1:${port}`], {
      HOLDSHELF_TOKEN: admin.token,
    });
    expect(listed.code, listed.stderr).toBe(0);
  });

  it("refuses an empty HOLDSHELF_AUTH_FILE (exit 2) rather than serve without tokens", async () => {
    dir = await makeTempDir();
    const run = await runHoldshelf(["serve", "--data-dir", join(dir.path, "data"), "--metrics-listen", "off"], {
      HOLDSHELF_AUTH_FILE: "",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--auth-file (HOLDSHELF_AUTH_FILE) is empty");
  });

  it.each([
    ["a missing file", undefined, /cannot read auth file .*auth\.json: ENOENT/],
    ["a file that is not JSON", "{tokens: []}", /auth file .*auth\.json is not valid JSON at line 1, column 2/],
    [
      "an entry without a hash",
      JSON.stringify({ tokens: [{ name: "w", permissions: [] }] }),
      /tokens\[0\]\.sha256 is missing/,
    ],
    [
      "a raw token where the hash goes",
      JSON.stringify({
        tokens: [{ ...makeToken("w", { queues: "*", allow: ["send"] }).entry, sha256: `hs_${"a".repeat(43)}` }],
      }),
      /tokens\[0\] \(\\"w\\"\)\.sha256 must be 64 hex digits/,
    ],
  ])("refuses to start with %s: exit 1, naming the problem", async (_what, text, message) => {
    dir = await makeTempDir();
    const authFile = join(dir.path, "auth.json");
    if (text !== undefined) await writeFile(authFile, text);
    const run = await runHoldshelf([
      "serve",
      "--data-dir",
      join(dir.path, "data"),
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      "off",
      "--auth-file",
      authFile,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('"msg":"cannot start"');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain("a".repeat(43));
  });
});
