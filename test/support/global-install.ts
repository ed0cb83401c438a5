import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** One file of `npm pack --json`'s answer. */
export interface PackedFile {
  readonly path: string;
  readonly size: number;
}

/** The package packed from this tree and installed with `npm install -g` into a prefix of its own. */
export interface GlobalInstall {
  /** The tarball `npm pack` wrote. */
  readonly tarball: string;
  /** Its size in bytes, and its files. */
  readonly size: number;
  readonly files: readonly PackedFile[];
  /** The install prefix; the command is `bin/holdshelf` in it. */
  readonly prefix: string;
  /** A directory of its own, outside the clone, where commands run. */
  readonly elsewhere: string;
  /** The environment a user's shell would have: the prefix's bin and this node first on PATH, no npm script variables. */
  readonly env: Record<string, string>;
}

/**
 * The environment of a shell, without the npm_* variables `npm test` set
 * (npm_config_local_prefix and the like would steer the npm the test runs),
 * with `bins` first on PATH, then the running node, so that the command's
 * `#!/usr/bin/env node` and npm run on the node under test.
 */
function userEnv(bins: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith("npm_")) env[key] = value;
  env["PATH"] = [...bins, dirname(process.execPath), env["PATH"] ?? ""].join(delimiter);
  return env;
}

/**
 * Packs the already-built tree (`npm run build` made dist/; --ignore-scripts
 * keeps prepare from building it again) and installs the tarball globally
 * into `dir`/prefix, as docs/install.md says. npm resolves the dependencies
 * from the registry, or from its cache where an earlier install left them.
 */
export async function installPackedPackage(dir: string): Promise<GlobalInstall> {
  if (!existsSync(join(root, "dist/console/index.html")) || !existsSync(join(root, "dist/src/cli/main.js")))
    throw new Error("dist/ is not built: run `npm run build` first");
  const env = userEnv([]);
  const { stdout } = await run(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", dir, "--loglevel", "error"],
    { cwd: root, env, maxBuffer: 16 * 1024 * 1024 },
  );
  const [packed] = JSON.parse(stdout) as [{ filename: string; size: number; files: PackedFile[] }];
  const tarball = join(dir, packed.filename);
  const prefix = join(dir, "prefix");
  await run(
    "npm",
    [
      "install",
      "--global",
      "--prefix",
      prefix,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel",
      "error",
      tarball,
    ],
    { cwd: dir, env },
  );
  const elsewhere = join(dir, "elsewhere");
  await mkdir(elsewhere);
  return {
    tarball,
    size: packed.size,
    files: packed.files,
    prefix,
    elsewhere,
    env: userEnv([join(prefix, "bin")]),
  };
}

/** Runs the installed `holdshelf` command to completion, from the directory outside the clone. */
export async function runInstalled(
  install: GlobalInstall,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn("holdshelf", args, {
    cwd: install.elsewhere,
    env: { ...install.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "close")) as [number];
  return { code, stdout, stderr };
}

/** The installed `holdshelf serve`, started from the directory outside the clone. */
export interface InstalledBroker {
  readonly child: ChildProcess;
  /** The fields of its "holdshelf listening" log line. */
  readonly listening: Record<string, unknown>;
  logs(): string;
}

/** Starts the installed `holdshelf serve` and waits for its listening line (or its exit, which rejects). */
export async function startInstalledBroker(
  install: GlobalInstall,
  args: string[],
  env: Record<string, string> = {},
): Promise<InstalledBroker> {
  const child = spawn("holdshelf", ["serve", ...args], {
    cwd: install.elsewhere,
    env: { ...install.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      // Whole lines only: a chunk may end inside one.
      const line = stderr
        .split("\n")
        .slice(0, -1)
        .find((text) => text.includes('"msg":"holdshelf listening"'));
      if (line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once("exit", (code) => reject(new Error(`holdshelf serve exited with ${code}: ${stderr}`)));
  });
  return { child, listening, logs: () => stderr };
}

/** Sends SIGTERM and resolves with the exit code. */
export async function stopInstalledBroker(broker: InstalledBroker): Promise<number | null> {
  if (broker.child.exitCode !== null) return broker.child.exitCode;
  const exited = once(broker.child, "exit");
  broker.child.kill("SIGTERM");
  const [code] = (await exited) as [number | null];
  return code;
}
