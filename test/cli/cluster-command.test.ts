// `holdshelf cluster init|status` and serve's cluster flags as an operator
// runs them: the real command against a real PostgreSQL, one server for the
// file and a new database per test.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { holdshelfBin, runHoldshelf } from "../support/broker-process.js";
import { startPostgres, type PostgresServer, skipWithoutPostgres } from "../support/postgres-server.js";
import { makeTempDir } from "../support/temp-dir.js";

describe.skipIf(skipWithoutPostgres)("holdshelf cluster, and serve --postgres", () => {
  let postgres: PostgresServer;
  let url: string;
  let broker: ChildProcess | undefined;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });
  beforeEach(async () => {
    url = await postgres.createDatabase();
  });
  afterEach(async () => {
    if (broker && broker.exitCode === null && broker.signalCode === null) {
      const exited = once(broker, "exit");
      broker.kill("SIGKILL");
      await exited;
    }
    broker = undefined;
  });

  it("says there is no cluster yet on an empty database", async () => {
    const result = await runHoldshelf(["cluster", "status", "--postgres", url]);
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain("no cluster here yet");
  });

  it("creates a cluster with its shard count, which is then fixed", async () => {
    const created = await runHoldshelf(["cluster", "init", "--postgres", url, "--shards", "16"]);
    expect(created).toMatchObject({ code: 0, stdout: "cluster ready: 16 shards\n" });

    const other = await runHoldshelf(["cluster", "init", "--postgres", url, "--shards", "32"]);
    expect(other.code).toBe(1);
    expect(other.stdout + other.stderr).toContain("already exists with 16 shards; its shard count is fixed");

    const again = await runHoldshelf(["cluster", "init", "--postgres", url]);
    expect(again).toMatchObject({ code: 0, stdout: "cluster ready: 16 shards\n" });
    // HOLDSHELF_POSTGRES stands for the flag.
    const status = await runHoldshelf(["cluster", "status"], { HOLDSHELF_POSTGRES: url });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("shards: 16\nmembers: 0\n");
    expect(status.stdout).toContain("unowned: 16 shards, 0 queues");
  });

  it.each(["0", "abc", "1.5", "65537"])("refuses --shards %s as a usage error", async (shards) => {
    const result = await runHoldshelf(["cluster", "init", "--postgres", url, "--shards", shards]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--shards is a whole number from 1 to 65536");
    expect((await runHoldshelf(["cluster", "status", "--postgres", url])).code).toBe(1); // nothing was created
  });

  it("shows a running broker as the one member, owning every shard", async () => {
    expect((await runHoldshelf(["cluster", "init", "--postgres", url, "--shards", "16"])).code).toBe(0);
    const started = startClusterBroker(url, "status-test");
    broker = started.child;
    expect((await runHoldshelf(["queue", "create", "jobs"], { HOLDSHELF_ADDRESS: await started.address })).code).toBe(
      0,
    );

    const status = await runHoldshelf(["cluster", "status", "--postgres", url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("shards: 16\nmembers: 1\n");
    expect(status.stdout).toMatch(/^ {2}status-test at \S+, last heartbeat \d+\.\d s ago$/m);
    expect(status.stdout).toMatch(/^ {2}status-test: 16 shards, 1 queues, epochs 1-1, lease \d+\.\d s left$/m);
    expect(status.stdout).toContain("unowned: 0 shards\n");
  });

  it("refuses cluster flags without --postgres, and URLs that are not postgres://", async () => {
    const nodeIdAlone = await serveExpectingRefusal(["--node-id", "x"]);
    expect(nodeIdAlone.stderr).toContain(
      "--node-id, --advertise, --shard-lease-ttl and --route-only are for cluster mode: add --postgres URL",
    );
    const routeOnlyAlone = await serveExpectingRefusal(["--route-only"]);
    expect(routeOnlyAlone.stderr).toContain("add --postgres URL");
    const ttlAlone = await serveExpectingRefusal(["--shard-lease-ttl", "5s"]);
    expect(ttlAlone.stderr).toContain("add --postgres URL");
    const ttlTooShort = await serveExpectingRefusal(["--postgres", url, "--shard-lease-ttl", "200ms"]);
    expect(ttlTooShort.stderr).toContain("--shard-lease-ttl is between 1s and 10m");
    const advertiseAlone = await serveExpectingRefusal(["--advertise", "10.0.0.1:50051"]);
    expect(advertiseAlone.stderr).toContain("add --postgres URL");

    const mysql = await serveExpectingRefusal(["--postgres", "mysql://x"]);
    expect(mysql.stderr).toContain("--postgres: entry 1 is not a postgres:// URL");
    const emptyInList = await serveExpectingRefusal(["--postgres", `${url},`]);
    expect(emptyInList.stderr).toContain("comma-separated list of postgres:// URLs, none empty");
  });

  it("never prints the password of a URL it refuses", async () => {
    const status = await runRefused(["cluster", "status", "--postgres", "http://u:secretpw@h/db"]);
    expect(status.code).toBe(2);
    for (const result of [
      status,
      await serveExpectingRefusal(["--postgres", "http://u:secretpw@h/db"]),
      await serveExpectingRefusal(["--postgres", `${url},mysql://u:secretpw@h/db`]),
      // Passwords with a slash or an @ in them, which a redaction by pattern would have let through.
      await serveExpectingRefusal(["--postgres", "mysql://u:pa/secretpw@h/db"]),
      await serveExpectingRefusal(["--postgres", "mysql://u:p@secretpw@h/db"]),
    ]) {
      expect(result.stderr).toMatch(/--postgres: entry [12] is not a postgres:\/\/ URL/);
      expect(result.stdout + result.stderr).not.toContain("secretpw");
    }
  });

  it("says it cannot reach PostgreSQL when nothing listens there, without the password", async () => {
    const result = await runHoldshelf([
      "cluster",
      "status",
      "--postgres",
      "postgres://holdshelf:secretpw@127.0.0.1:1/x",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain("cannot reach PostgreSQL");
    expect(result.stdout + result.stderr).toContain("127.0.0.1:1");
    expect(result.stdout + result.stderr).not.toContain("secretpw");
  });
});

/**
 * Runs `holdshelf serve` with `flags`, expecting it to exit 2 at once; with
 * a free port and a temporary data directory, so that a regression which
 * starts a broker clashes with nothing.
 */
async function serveExpectingRefusal(flags: string[]): Promise<{ stdout: string; stderr: string }> {
  const dir = await makeTempDir();
  try {
    const result = await runRefused([
      "serve",
      "--data-dir",
      dir.path,
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      "off",
      ...flags,
    ]);
    expect(result.code, flags.join(" ")).toBe(2);
    return result;
  } finally {
    await dir.remove();
  }
}

/**
 * runHoldshelf for a command that should exit at once: if a regression let
 * `serve` start, it is killed after 10 s (and fails the test) instead of
 * outliving it.
 */
async function runRefused(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [holdshelfBin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const [code] = (await once(child, "close")) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Starts `holdshelf serve --postgres` on a free port; `address` resolves once it logs that it listens. */
function startClusterBroker(url: string, nodeId: string): { child: ChildProcess; address: Promise<string> } {
  const args = [
    "serve",
    "--postgres",
    url,
    "--node-id",
    nodeId,
    "--listen",
    "127.0.0.1:0",
    "--metrics-listen",
    "off",
    "--sqs-listen",
    "off",
    "--console-listen",
    "off",
  ];
  const child = spawn(process.execPath, [holdshelfBin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const address = new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /"msg":"holdshelf listening","address":"([^"]+)"/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`holdshelf serve exited with ${code}: ${stderr}`)));
  });
  return { child, address };
}
