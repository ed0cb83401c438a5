/**
 * A new Python user's first program: the producer and worker of
 * test/clients/python-user/, written from docs/clients/python.md alone, are
 * copied into a new directory outside the repository, which gets its own venv
 * with the library installed as the docs' Install section says (the wheel,
 * offline, over Debian's grpcio and protobuf), and run against a real broker
 * process.
 */
import { execFile } from "node:child_process";
import { copyFile, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { startJsonLines, type JsonLinesProcess } from "../support/json-lines-process.js";
import { buildPythonWheel, missingPythonTools, systemPython } from "../support/python-package.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { makeTempDir } from "../support/temp-dir.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const programs = fileURLToPath(new URL("./python-user/", import.meta.url));
const missing = [...missingCommands(["mypy"]), ...missingPythonTools()];
const count = 20;

/** The program's exit code, or an error with what it wrote to stderr (and a SIGKILL) if it runs past `ms`. */
async function exitCode(program: JsonLinesProcess, name: string, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      program.child.kill("SIGKILL");
      reject(new Error(`${name} still running after ${ms} ms; stderr: ${program.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([program.exited(), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(skipWithout(missing))("a Python program written from the docs, in its own directory", () => {
  let project: Awaited<ReturnType<typeof makeTempDir>>;
  let broker: BrokerProcess;
  let data: Awaited<ReturnType<typeof makeTempDir>>;
  /** Runs a program of the project with the project's venv, nothing of the repository on its path. */
  const python = (program: string, args: string[]) =>
    startJsonLines(`${project.path}/.venv/bin/python`, [`${project.path}/${program}`, ...args], { PYTHONPATH: "" });

  beforeAll(async () => {
    expect(missing, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    const wheel = await buildPythonWheel();
    project = await makeTempDir("holdshelf-python-user-");
    for (const file of ["producer.py", "worker.py"]) await copyFile(`${programs}${file}`, `${project.path}/${file}`);
    // The docs' commands, run in the new directory.
    const docs = await readFile(`${repoRoot}docs/clients/python.md`, "utf8");
    expect(docs).toContain("/usr/bin/python3 -m venv --system-site-packages .venv");
    expect(docs).toContain(".venv/bin/pip install --no-index ");
    await run(systemPython, ["-m", "venv", "--system-site-packages", ".venv"], { cwd: project.path });
    await run(`${project.path}/.venv/bin/pip`, ["install", "--quiet", "--no-index", wheel], {
      cwd: project.path,
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
    });
    data = await makeTempDir("holdshelf-python-user-data-");
    broker = await startBrokerProcess(data.path);
  }, 180_000);
  afterAll(async () => {
    broker?.child.kill("SIGKILL");
    await project?.remove();
    await data?.remove();
  });

  it("type-checks under mypy --strict against the installed library (its py.typed)", async () => {
    const python = `${project.path}/.venv/bin/python`;
    const flags = ["--strict", "--python-executable", python, "--no-incremental", "--cache-dir", "/dev/null"];
    const { stdout } = await run("mypy", [...flags, "producer.py", "worker.py"], { cwd: project.path });
    expect(stdout).toContain("Success: no issues found in 2 source files");
  }, 120_000);

  it("sends with its producer, and its worker handles every message once and stops on SIGTERM", async () => {
    const producer = python("producer.py", ["--address", broker.address, "--queue", "orders", "--count", `${count}`]);
    expect(await exitCode(producer, "producer.py", 30_000), producer.stderr()).toBe(0);
    const sent = new Map(producer.events.map((event) => [event.sent as string, event.body as string]));
    expect(sent.size).toBe(count);

    const worker = python("worker.py", ["--address", broker.address, "--queue", "orders"]);
    await worker.waitFor(() => worker.events.length >= count, 30_000);
    worker.child.kill("SIGTERM");
    expect(await exitCode(worker, "worker.py after SIGTERM", 30_000), worker.stderr()).toBe(0);
    const processed = worker.events.map((event) => [
      event.processed,
      event.body,
      (event.attributes as { n: string }).n,
    ]);
    expect(processed).toHaveLength(count);
    expect(new Map(processed.map(([id, body]) => [id as string, body as string]))).toEqual(sent);
    for (const [, body, n] of processed) expect(body).toBe(`order-${n}`);

    const client = new QueueClient(broker.address);
    try {
      const { stats } = await client.getQueue("orders");
      expect(stats).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    } finally {
      await client.close();
    }
  }, 120_000);
});
