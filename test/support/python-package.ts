import { execFile, spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { cp, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { makeTempDir } from "./temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const packageDir = `${repoRoot}clients/python`;
/** Debian's interpreter: the one python3-grpcio and python3-protobuf are installed for. */
export const systemPython = "/usr/bin/python3";
/** What builds leave in clients/python, none of it the package's source. */
const buildLeftovers = /(^|\/)(build|dist|__pycache__|[^/]*\.egg-info)$/;
/** Where built wheels are kept, one directory per hash of the package's source. */
const wheelCache = `${repoRoot}.build/python-wheels`;

/**
 * What installPythonPackage needs that this machine lacks (Debian packages:
 * see .ci/run): Debian's interpreter with grpcio, protobuf, venv, and
 * setuptools, wheel and build to make the wheel. No protoc: the generated
 * code is committed.
 */
export function missingPythonTools(): string[] {
  if (spawnSync(systemPython, ["-c", "import grpc, google.protobuf, venv, setuptools, wheel, build"]).status !== 0) {
    return ["python3-grpcio, python3-protobuf, python3-venv, python3-setuptools, python3-wheel, python3-build"];
  }
  return [];
}

/** The package's source files under clients/python, sorted, relative to it. */
async function sourceFiles(dir = packageDir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries
      .filter((entry) => !buildLeftovers.test(entry.name))
      .map(async (entry) => {
        const path = join(dir, entry.name);
        return entry.isDirectory() ? sourceFiles(path) : [relative(packageDir, path)];
      }),
  );
  return files.flat().sort();
}

/** Copies clients/python to destination, without what builds left in it. */
export async function copyPackageSource(destination: string): Promise<void> {
  await cp(packageDir, destination, { recursive: true, filter: (path) => !buildLeftovers.test(path) });
}

/**
 * The wheel of clients/python, built as CI builds it (`python3 -m build
 * --wheel --no-isolation`, Debian's setuptools, offline) and returned as its
 * path.
 *
 * It is built once per content of clients/python: the wheel is kept under
 * .build/python-wheels/<hash of the source>/. Test files call this at the
 * same time, so each builds in its own temporary directory, from a copy of
 * the source (the build writes into its source tree), and moves the result
 * into place with one rename: a reader sees the whole directory or none,
 * and a loser of the race keeps the winner's identical wheel.
 */
export async function buildPythonWheel(): Promise<string> {
  const hash = createHash("sha256");
  for (const file of await sourceFiles()) {
    hash
      .update(`${file}\0`)
      .update(await readFile(join(packageDir, file)))
      .update("\0");
  }
  const cached = `${wheelCache}/${hash.digest("hex").slice(0, 16)}`;
  const wheelIn = async (dir: string) => {
    const wheels = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith(".whl"));
    return wheels.length === 1 ? join(dir, wheels[0] as string) : undefined;
  };
  const found = await wheelIn(cached);
  if (found) return found;
  await mkdir(wheelCache, { recursive: true });
  const dir = await makeTempDir("holdshelf-wheel-");
  // Beside the cache, not in the temporary directory: a rename does not cross file systems.
  const out = `${wheelCache}/.building-${randomUUID()}`;
  try {
    const source = `${dir.path}/source`;
    await copyPackageSource(source);
    await run(systemPython, ["-m", "build", "--wheel", "--no-isolation", "--outdir", out, source]);
    await rename(out, cached).catch((error: NodeJS.ErrnoException) => {
      // ENOTEMPTY/EEXIST: another test file put the same wheel there first.
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
  } finally {
    await rm(out, { recursive: true, force: true });
    await dir.remove();
  }
  const built = await wheelIn(cached);
  if (!built) throw new Error(`no wheel in ${cached}`);
  return built;
}

/** A venv made for a test, and a function that removes it. */
export interface PythonVenv {
  /** The venv's interpreter. */
  python: string;
  remove(): Promise<void>;
}

/**
 * Installs clients/python as CI checks it, offline: its wheel
 * (buildPythonWheel) into a fresh venv in a temporary directory that sees
 * Debian's grpcio and protobuf (--system-site-packages). pip resolves the
 * wheel's declared dependencies from those (--no-index: no download), so
 * the install fails if Debian's versions fall outside the declared bounds.
 */
export async function installPythonPackage(): Promise<PythonVenv> {
  const wheel = await buildPythonWheel();
  const dir = await makeTempDir("holdshelf-python-");
  try {
    const venv = `${dir.path}/venv`;
    await run(systemPython, ["-m", "venv", "--system-site-packages", venv]);
    const python = `${venv}/bin/python`;
    await run(python, ["-m", "pip", "install", "--quiet", "--no-index", wheel], {
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
    });
    return { python, remove: () => dir.remove() };
  } catch (error) {
    await dir.remove();
    throw error;
  }
}
