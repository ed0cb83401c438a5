/**
 * The Go client library as a Go module (clients/go/go.mod, go.sum): its
 * module path and requirements build in module mode, offline, from a vendor
 * directory of Debian's sources standing in for the module proxy
 * (clients/go/vendor-from-debian.sh); go.sum holds both checksums of every
 * module go.mod requires and the build takes packages from; and a program
 * written from docs/clients/go.md alone, in a new module outside the
 * repository, follows the page's "today" recipe (a `replace` to a
 * checkout), builds in module mode and sends and consumes messages through
 * a real broker.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { startJsonLines } from "../support/json-lines-process.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const library = join(repoRoot, "clients/go");
const modulePath = "github.com/holdshelf/holdshelf/clients/go";
const missing = missingCommands(["go", "gofmt"]);

/** A Go module's go.mod, as `go mod edit -json` prints it. */
interface GoMod {
  Module: { Path: string };
  Require?: { Path: string; Version: string; Indirect?: boolean }[];
}

async function readGoMod(dir: string): Promise<GoMod> {
  const { stdout } = await run("go", ["mod", "edit", "-json"], { cwd: dir });
  return JSON.parse(stdout) as GoMod;
}

describe.skipIf(skipWithout(missing))("the Go client library as a module", () => {
  // "<module> <version>" of each module the offline module build took packages from.
  let vendored: string[];

  beforeAll(async () => {
    expect(missing, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    const built = await run("bash", [join(library, "check-module-build.sh")], { cwd: repoRoot });
    expect(built.stdout).toContain("module build OK");
    vendored = [...built.stdout.matchAll(/^vendored (\S+ \S+)$/gm)].map((match) => match[1]!);
  }, 300_000);

  it("is the module the repository's path names, requiring gRPC and protobuf, and builds in module mode", async () => {
    const mod = await readGoMod(library);
    expect(mod.Module.Path).toBe(modulePath);
    const direct = mod.Require!.filter((r) => r.Indirect !== true).map((r) => r.Path);
    expect(direct.sort()).toEqual([
      "google.golang.org/genproto",
      "google.golang.org/grpc",
      "google.golang.org/protobuf",
    ]);
    // Every module the build takes packages from is required, as Go >= 1.17
    // wants (vendor-from-debian.sh fails on a package no requirement provides).
    const required = mod.Require!.map((r) => `${r.Path} ${r.Version}`);
    expect(required).toEqual(expect.arrayContaining(vendored));
    expect(vendored).toContain("google.golang.org/grpc v1.33.3");
  });

  it("has go.sum's code and go.mod checksums for every module go.mod requires or the build vendors", async () => {
    const mod = await readGoMod(library);
    const sums = new Map<string, string>();
    for (const line of (await readFile(join(library, "go.sum"), "utf8")).split("\n").filter(Boolean)) {
      const match = /^(\S+ \S+) (h1:[A-Za-z0-9+/]{43}=)$/.exec(line);
      expect(match, `a malformed go.sum line: ${line}`).not.toBeNull();
      sums.set(match![1]!, match![2]!);
    }
    const modules = new Set([...mod.Require!.map((r) => `${r.Path} ${r.Version}`), ...vendored]);
    const lacking = [...modules].flatMap((module) =>
      [module, `${module}/go.mod`].filter((entry) => !sums.has(entry)).map((entry) => `${entry} h1:`),
    );
    expect(lacking, "go.sum lines missing").toEqual([]);
  });

  describe("a program written from the docs, in a module of its own outside the repository", () => {
    let app: { path: string; remove(): Promise<void> };
    let dataDir: { path: string; remove(): Promise<void> };
    let broker: BrokerProcess | undefined;
    // The build as the docs' recipe runs it, offline (see the recipe below).
    const goEnv = {
      ...process.env,
      GO111MODULE: "on",
      GOFLAGS: "-mod=vendor",
      GOPROXY: "off",
      GOCACHE: join(repoRoot, ".build/go-cache"),
    };

    beforeAll(async () => {
      app = await makeTempDir("holdshelf-go-app-");
      dataDir = await makeTempDir();
      broker = await startBrokerProcess(dataDir.path);
    }, 60_000);
    afterAll(async () => {
      if (broker !== undefined && broker.child.exitCode === null) {
        const exited = once(broker.child, "exit");
        broker.child.kill("SIGTERM");
        await exited;
      }
      await app?.remove();
      await dataDir?.remove();
    });

    it("builds in module mode by the documented recipe, offline", async () => {
      await cp(fileURLToPath(new URL("./go-module/", import.meta.url)), app.path, { recursive: true });
      const docs = await readFile(join(repoRoot, "docs/clients/go.md"), "utf8");
      // docs/clients/go.md's recipe for today, line by line, with the
      // checkout at this repository's path instead of ../holdshelf.
      const recipe = [
        "go mod init example.com/jobs",
        `go mod edit -require=${modulePath}@v0.0.0 -replace=${modulePath}=../holdshelf/clients/go`,
      ];
      for (const line of recipe) expect(docs).toContain(line);
      for (const line of recipe) {
        await run("bash", ["-c", line.replace("../holdshelf/clients/go", library)], { cwd: app.path, env: goEnv });
      }
      // `go mod tidy` needs the module proxy: offline, the docs' recipe
      // runs vendor-from-debian.sh instead, which adds to go.mod what tidy
      // would (the library's requirements, as this module's indirect ones)
      // and writes a vendor directory of Debian's sources (go.sum is not
      // read in vendor mode), then builds with -mod=vendor.
      const offline = "bash ../holdshelf/clients/go/vendor-from-debian.sh .";
      expect(docs).toContain(offline);
      const vendoredHere = await run("bash", ["-c", offline.replace("../holdshelf/clients/go", library)], {
        cwd: app.path,
        env: goEnv,
      });
      expect(vendoredHere.stdout).toContain(`vendored ${modulePath} v0.0.0`);
      const required = (await readGoMod(app.path)).Require!.map((r) => `${r.Path} ${r.Version}`);
      const libraryRequires = (await readGoMod(library)).Require!.map((r) => `${r.Path} ${r.Version}`);
      expect(required.sort()).toEqual([`${modulePath} v0.0.0`, ...libraryRequires].sort());
      // The docs' `go build -mod=vendor ./...`, into bin/ for the next test.
      expect(docs).toContain("go build -mod=vendor ./...");
      await run("go", ["build", "-o", "bin/", "./..."], { cwd: app.path, env: goEnv });
      await run("go", ["vet", "./..."], { cwd: app.path, env: goEnv });
      const { stdout } = await run("gofmt", ["-l", "producer", "worker"], { cwd: app.path });
      expect(stdout).toBe("");
    }, 300_000);

    it("sends with its producer and consumes with its worker, against a real broker", async () => {
      const producer = startJsonLines(join(app.path, "bin/producer"), ["--address", broker!.address, "--count", "5"]);
      expect(await producer.exited(), producer.stderr()).toBe(0);
      const sent = producer.events.map((event) => event.sent as string);
      expect(sent).toHaveLength(5);

      const worker = startJsonLines(join(app.path, "bin/worker"), ["--address", broker!.address]);
      try {
        for (const id of sent) await worker.waitFor((event) => event.processed === id, 30_000);
      } finally {
        worker.child.kill("SIGTERM");
      }
      expect(await worker.exited(), worker.stderr()).toBe(0);
      expect(worker.events.map((event) => event.body).sort()).toEqual(["job-0", "job-1", "job-2", "job-3", "job-4"]);
      // Each handler returned nil: the messages are gone, not waiting for a retry.
      const client = new QueueClient(broker!.address);
      try {
        expect((await client.getQueue("jobs")).stats).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
      } finally {
        await client.close();
      }
    }, 60_000);
  });
});
