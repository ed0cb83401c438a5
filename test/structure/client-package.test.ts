import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { makeTempDir } from "../support/temp-dir.js";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const packageDir = join(root, "packages/client");

/** One package of a package-lock.json (lockfileVersion 3). */
interface LockEntry {
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly [field: string]: unknown;
}

/**
 * The lock entries of `dependencies` and everything they need, as the
 * repository's own package-lock.json pins them. With them the test project
 * installs by `npm ci --offline` from the cache that the repository's
 * `npm ci` filled: `npm install` would ask the registry for every package's
 * metadata, which that cache does not hold.
 */
function lockedClosure(
  lock: Record<string, LockEntry>,
  dependencies: Record<string, string>,
): Record<string, LockEntry> {
  // Node's lookup: the nearest node_modules folder, from the dependent upwards.
  const locate = (from: string, name: string): string => {
    for (let at = from; ; at = at.slice(0, Math.max(0, at.lastIndexOf("/node_modules/")))) {
      const path = `${at === "" ? "" : `${at}/`}node_modules/${name}`;
      if (lock[path] !== undefined) return path;
      if (at === "") throw new Error(`package-lock.json has no ${name} for ${from || "the root"}`);
    }
  };
  const closure: Record<string, LockEntry> = {};
  const pending = Object.keys(dependencies).map((name) => locate("", name));
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    if (closure[path] !== undefined) continue;
    const entry = lock[path]!;
    closure[path] = entry;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies }))
      pending.push(locate(path, name));
  }
  return closure;
}

describe("the @holdshelf/client package", () => {
  let h: GrpcHarness;
  let dir: Awaited<ReturnType<typeof makeTempDir>>;

  beforeAll(async () => {
    h = await startGrpcHarness();
    dir = await makeTempDir("holdshelf-client-package-");
  });

  afterAll(async () => {
    await h?.stop();
    await dir?.remove();
  });

  it("declares the root package's ranges of grpc-js and protobuf-es, and nothing else", async () => {
    const rootPackage = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    const clientPackage = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));
    expect(clientPackage.version).toBe(rootPackage.version);
    expect(clientPackage.dependencies).toEqual({
      "@bufbuild/protobuf": rootPackage.dependencies["@bufbuild/protobuf"],
      "@grpc/grpc-js": rootPackage.dependencies["@grpc/grpc-js"],
    });
  });

  it("packs, installs without LevelDB or prom-client, and sends and receives through a broker", {
    timeout: 60_000,
  }, async () => {
    // prepack builds the package from src/ first.
    const { stdout: packed } = await run("npm", ["pack", "--pack-destination", dir.path, "--silent"], {
      cwd: packageDir,
    });
    const tarball = packed.trim().split("\n").at(-1)!;
    const tarballBytes = await readFile(join(dir.path, tarball));
    const manifest = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));

    const project = join(dir.path, "project");
    await mkdir(project);
    await writeFile(join(project, tarball), tarballBytes);
    const dependencies = { "@holdshelf/client": `file:${tarball}` };
    await writeFile(
      join(project, "package.json"),
      JSON.stringify({ name: "uses-client", private: true, type: "module", dependencies }),
    );
    const rootLock = JSON.parse(await readFile(join(root, "package-lock.json"), "utf8")).packages;
    const lock = {
      name: "uses-client",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "uses-client", dependencies },
        "node_modules/@holdshelf/client": {
          version: manifest.version,
          resolved: `file:${tarball}`,
          integrity: `sha512-${createHash("sha512").update(tarballBytes).digest("base64")}`,
          dependencies: manifest.dependencies,
        },
        ...lockedClosure(rootLock, manifest.dependencies),
      },
    };
    await writeFile(join(project, "package-lock.json"), JSON.stringify(lock, null, 2));
    await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: project });

    const installed = [
      ...(await readdir(join(project, "node_modules"))),
      ...(await readdir(join(project, "node_modules/@grpc"))).map((name) => `@grpc/${name}`),
    ];
    expect(installed).toContain("@grpc/grpc-js");
    for (const serverOnly of ["classic-level", "abstract-level", "prom-client"])
      expect(installed).not.toContain(serverOnly);

    await writeFile(
      join(project, "use-client.mjs"),
      `import { QueueClient } from "@holdshelf/client";
const client = new QueueClient(process.argv[2]);
const queue = await client.createQueue("packaged");
await client.send(queue.name, "from the package");
const [message] = await client.receive(queue.name, { waitTimeMs: 5000 });
await client.delete(queue.name, message.receiptHandle);
const { stats } = await client.getQueue(queue.name);
console.log(JSON.stringify({ body: Buffer.from(message.body).toString(), stats }));
client.close();
`,
    );
    const { stdout } = await run(process.execPath, ["use-client.mjs", h.server.address], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ body: "from the package", stats: { visible: 0, inFlight: 0, delayed: 0 } });
  });
});
