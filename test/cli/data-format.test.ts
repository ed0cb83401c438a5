// The commands refuse storage in a format newer than they read: `serve`
// on a data directory or a cluster database, and `cluster init`, exit with
// status 3 and say what to run, with nothing changed. Release 0.1.0's
// broker (its package, test/fixtures/release-0.1.0) refuses a newer layout
// too: the guard of docs/upgrading.md's mixed-version rule.
import { spawn } from "node:child_process";
import { once } from "node:events";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatTooNewExitStatus } from "../../src/cli/exit-status.js";
import { formatVersionKey } from "../../src/store/format-version.js";
import { postgresLayoutVersion } from "../../src/store/postgres/schema-upgrades.js";
import { holdshelfBin } from "../support/broker-process.js";
import { levelContents, putLevelKey } from "../support/level-contents.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { postgresSnapshot } from "../support/postgres-snapshot.js";
import { unpackDataDir, unpackRelease } from "../support/release-0.1.0.js";
import { makeTempDir } from "../support/temp-dir.js";

const postgres = postgresForFile();
const serveOff = [
  "--listen",
  "127.0.0.1:0",
  "--metrics-listen",
  "off",
  "--sqs-listen",
  "off",
  "--console-listen",
  "off",
];

/** Runs a holdshelf command to its end: its exit status and standard error. */
async function runHoldshelf(args: string[], bin = holdshelfBin): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = await once(child, "exit");
  return { code: code as number | null, stderr };
}

/** The log line a refused start writes. */
function cannotStart(stderr: string): Record<string, unknown> {
  const line = stderr.split("\n").find((text) => text.includes('"msg":"cannot start"'));
  expect(line, stderr).toBeDefined();
  return JSON.parse(line!) as Record<string, unknown>;
}

let dir: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await dir.remove();
});

describe("a data directory newer than this holdshelf", () => {
  it("is refused by serve, with exit status 3, the stable code and nothing changed", async () => {
    const dataDir = await unpackDataDir(dir.path);
    await putLevelKey(dataDir, formatVersionKey, Buffer.of(0, 0, 0, 2));
    const before = await levelContents(dataDir);
    const { code, stderr } = await runHoldshelf(["serve", "--data-dir", dataDir, ...serveOff]);
    expect(code).toBe(formatTooNewExitStatus);
    expect(cannotStart(stderr)).toMatchObject({
      level: "error",
      code: "DATA_FORMAT_TOO_NEW",
      reason: expect.stringContaining(
        `data directory ${dataDir} is in holdshelf data format 2, newer than data format 1`,
      ),
    });
    expect(await levelContents(dataDir)).toEqual(before);
  });
});

describe.skipIf(skipWithoutPostgres)("a cluster database newer than this holdshelf", () => {
  let url: string;
  let admin: pg.Client;
  beforeEach(async () => {
    url = await postgres().createDatabase();
    const init = await runHoldshelf(["cluster", "init", "--postgres", url, "--shards", "4"]);
    expect(init.code, init.stderr).toBe(0);
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("UPDATE holdshelf_cluster SET layout_version = $1", [postgresLayoutVersion + 1]);
  });
  afterEach(async () => {
    await admin.end();
  });

  it("is refused by serve and by cluster init, with exit status 3 and nothing changed", async () => {
    const before = await postgresSnapshot(admin);
    const serve = await runHoldshelf(["serve", "--postgres", url, "--node-id", "old", ...serveOff]);
    expect(serve.code).toBe(formatTooNewExitStatus);
    expect(cannotStart(serve.stderr)).toMatchObject({
      code: "DATA_FORMAT_TOO_NEW",
      reason: expect.stringContaining("the cluster's database is in holdshelf layout 2, newer than layout 1"),
    });
    const init = await runHoldshelf(["cluster", "init", "--postgres", url]);
    expect(init.code).toBe(formatTooNewExitStatus);
    expect(init.stderr).toMatch(/^holdshelf: the cluster's database is in holdshelf layout 2, newer than layout 1/);
    expect(await postgresSnapshot(admin)).toEqual(before);
  });

  it("is refused by a 0.1.0 broker, with nothing changed", async () => {
    const release010 = await unpackRelease(dir.path);
    const before = await postgresSnapshot(admin);
    const { code, stderr } = await runHoldshelf(
      ["serve", "--postgres", url, "--node-id", "old", ...serveOff],
      release010,
    );
    expect(code).toBe(1);
    expect(cannotStart(stderr).reason).toBe("the database holds holdshelf layout 2; this holdshelf reads layout 1");
    expect(await postgresSnapshot(admin)).toEqual(before);
  });
});
