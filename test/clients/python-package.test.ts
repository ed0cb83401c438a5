/**
 * The Python package (clients/python) as it ships: its committed generated
 * code is fresh against proto/, its wheel holds that code, its typing marker
 * and its declared dependencies, and a venv without grpcio gets an ImportError
 * that says what to install. What the package does is python-client.test.ts's.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPythonWheel, copyPackageSource, missingPythonTools, systemPython } from "../support/python-package.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const missing = [...missingCommands(["protoc", "grpc_python_plugin"]), ...missingPythonTools()];

/** Prints a wheel's file names and its METADATA as JSON. */
const readWheel = [
  "import json, sys, zipfile",
  "wheel = zipfile.ZipFile(sys.argv[1])",
  "names = wheel.namelist()",
  "meta = next(n for n in names if n.endswith('.dist-info/METADATA'))",
  "print(json.dumps({'names': names, 'metadata': wheel.read(meta).decode()}))",
].join("\n");

describe.skipIf(skipWithout(missing))("the Python package as it ships", () => {
  let wheel: string;
  let contents: { names: string[]; metadata: string };

  beforeAll(async () => {
    expect(missing, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    wheel = await buildPythonWheel();
    const { stdout } = await run(systemPython, ["-c", readWheel, wheel]);
    contents = JSON.parse(stdout) as typeof contents;
  }, 180_000);

  it("has committed generated code that matches proto/", async () => {
    await run(systemPython, [`${repoRoot}clients/python/generate.py`, "--check"], { cwd: repoRoot });
  }, 120_000);

  it("builds a wheel holding the generated code, its typed stubs and py.typed", () => {
    expect(wheel).toMatch(/\/holdshelf-0\.2\.0-py3-none-any\.whl$/);
    expect(contents.names).toEqual(
      expect.arrayContaining([
        "holdshelf/py.typed",
        "holdshelf/__init__.py",
        "holdshelf/_gen/holdshelf/v1/queue_service_pb2.py",
        "holdshelf/_gen/holdshelf/v1/queue_service_pb2.pyi",
        "holdshelf/_gen/holdshelf/v1/queue_service_pb2_grpc.py",
        "holdshelf/_gen/google/rpc/status_pb2.pyi",
      ]),
    );
    // Only the package: no build script, no public copy of the generated packages.
    const outside = contents.names.filter((name) => !/^holdshelf(\/|-0\.2\.0\.dist-info\/)/.test(name));
    expect(outside).toEqual([]);
  });

  it("declares grpcio and protobuf at the versions it was generated and tested with, and the project's URLs", () => {
    const field = (name: string) =>
      contents.metadata
        .split("\n")
        .filter((line) => line.startsWith(`${name}: `))
        .map((line) => line.slice(name.length + 2));
    expect(field("Version")).toEqual(["0.2.0"]);
    expect(field("Requires-Dist")).toEqual(["grpcio (<2,>=1.51.1)", "protobuf (<6,>=4.21.12)"]);
    expect(field("Requires-Python")).toEqual([">=3.11"]);
    expect(field("Project-URL")).toContain("Source, https://github.com/holdshelf/holdshelf/tree/main/clients/python");
  });

  it("installs from a checkout, and from a git URL with #subdirectory, with no protoc on the PATH", async () => {
    const dir = await makeTempDir("holdshelf-python-sources-");
    try {
      // A repository holding only clients/python: no proto/ to generate from either.
      const repo = `${dir.path}/repo`;
      const git = (args: string[]) =>
        run(
          "git",
          ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "core.hooksPath=/dev/null", ...args],
          {
            cwd: repo,
          },
        );
      await copyPackageSource(`${repo}/clients/python`);
      await git(["init", "--quiet"]);
      await git(["add", "."]);
      await git(["commit", "--quiet", "-m", "clients/python"]);
      // The PATH has git, for pip's clone, and nothing else.
      await mkdir(`${dir.path}/bin`);
      await symlink((await run("sh", ["-c", "command -v git"])).stdout.trim(), `${dir.path}/bin/git`);
      await run(systemPython, ["-m", "venv", "--system-site-packages", `${dir.path}/venv`]);
      const python = `${dir.path}/venv/bin/python`;
      const env = { PATH: `${dir.path}/bin`, HOME: dir.path, PIP_DISABLE_PIP_VERSION_CHECK: "1" };
      const pip = ["-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation"];
      const imported = () => {
        const probe = "import holdshelf, holdshelf._wire as w; print(w.QueueServiceStub.__module__)";
        const result = spawnSync(python, ["-c", probe], { cwd: "/", env, encoding: "utf8" });
        expect(result.status, result.stderr).toBe(0);
        return result.stdout.trim();
      };
      await run(python, [...pip, `${repo}/clients/python`], { env });
      expect(imported()).toBe("holdshelf._gen.holdshelf.v1.queue_service_pb2_grpc");
      await run(python, [...pip, "--force-reinstall", "--no-deps", `git+file://${repo}#subdirectory=clients/python`], {
        env,
      });
      expect(imported()).toBe("holdshelf._gen.holdshelf.v1.queue_service_pb2_grpc");
    } finally {
      await dir.remove();
    }
  }, 180_000);

  describe("in a venv without grpcio and protobuf", () => {
    let python: string;
    let remove: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      const dir = await makeTempDir("holdshelf-bare-venv-");
      remove = dir.remove;
      // No --system-site-packages, and --no-deps: nothing brings grpcio or protobuf.
      await run(systemPython, ["-m", "venv", `${dir.path}/venv`]);
      python = `${dir.path}/venv/bin/python`;
      await run(python, ["-m", "pip", "install", "--quiet", "--no-index", "--no-deps", wheel], {
        env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
      });
    }, 120_000);
    afterAll(async () => {
      await remove?.();
    });

    it("raises, from import holdshelf, an ImportError that names the packages to install", () => {
      const probe = [
        "import json",
        "try:",
        "    import holdshelf",
        "except ImportError as error:",
        "    print(json.dumps({'type': type(error).__name__, 'name': error.name, 'message': str(error)}))",
      ].join("\n");
      const result = spawnSync(python, ["-c", probe], { cwd: "/", env: { PATH: "/usr/bin:/bin" }, encoding: "utf8" });
      expect(result.status, result.stderr).toBe(0);
      const error = JSON.parse(result.stdout) as { type: string; name: string; message: string };
      expect(error.type).toBe("ModuleNotFoundError");
      expect(error.name).toBe("grpc");
      expect(error.message).toContain("pip install grpcio protobuf");
    });
  });
});
