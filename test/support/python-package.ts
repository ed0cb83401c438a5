import { execFile, spawnSync } from "node:child_process";
import { cp } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { missingCommands } from "./required-tools.js";
import { makeTempDir } from "./temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
/** Debian's interpreter: the one python3-grpcio and python3-protobuf are installed for. */
export const systemPython = "/usr/bin/python3";

/**
 * What installPythonPackage needs that this machine lacks (Debian packages:
 * see .ci/run): protoc and the gRPC plugin for the build, and Debian's
 * interpreter with grpcio, protobuf, venv, setuptools and wheel.
 */
export function missingPythonTools(): string[] {
  const missing = missingCommands(["protoc", "grpc_python_plugin"]);
  if (spawnSync(systemPython, ["-c", "import grpc, google.protobuf, venv, setuptools, wheel"]).status !== 0) {
    missing.push("python3-grpcio, python3-protobuf, python3-venv, python3-setuptools, python3-wheel");
  }
  return missing;
}

/**
 * Installs clients/python as a user would, offline: a fresh venv in a
 * temporary directory that sees Debian's grpcio and protobuf
 * (--system-site-packages), and pip building the package (stubs generated
 * from proto/ by its setup.py) with Debian's setuptools and wheel
 * (--no-build-isolation, --no-index: no download). Returns the venv's python
 * and a function that removes the venv.
 *
 * It builds from a copy of clients/python, since pip builds in the source
 * tree: two test files installing at once would race on its build directory.
 */
export async function installPythonPackage(): Promise<{ python: string; remove(): Promise<void> }> {
  const dir = await makeTempDir("holdshelf-python-");
  try {
    const source = `${dir.path}/source`;
    const leftovers = /\/(build|__pycache__|_gen|[^/]*\.egg-info)$/;
    await cp(`${repoRoot}clients/python`, source, { recursive: true, filter: (path) => !leftovers.test(path) });
    const venv = `${dir.path}/venv`;
    await run(systemPython, ["-m", "venv", "--system-site-packages", venv]);
    const python = `${venv}/bin/python`;
    await run(python, ["-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation", source], {
      // The copy is outside the repository: setup.py is told where proto/ is.
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", HOLDSHELF_PROTO_DIR: `${repoRoot}proto` },
    });
    return { python, remove: () => dir.remove() };
  } catch (error) {
    await dir.remove();
    throw error;
  }
}
