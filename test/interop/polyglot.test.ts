/**
 * The Go and Python client libraries (clients/) and the TypeScript client
 * against one real broker, together: the examples under examples/ side by
 * side with the TypeScript Consumer, a Go worker killed mid-job whose lease
 * and checkpoint pass to a Python worker (the conformance workers of
 * test/conformance/workers/), and each language's view of error codes,
 * ErrorInfo reasons, deadlines and cancellation (test/interop/*​/probe).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Consumer } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { startJsonLines, type JsonLinesProcess } from "../support/json-lines-process.js";
import { installPythonPackage, missingPythonTools } from "../support/python-package.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => `${repoRoot}.build/bin/${name}`;

const missingTools = [...missingCommands(["go", "protoc-gen-go", "protoc-gen-go-grpc"]), ...missingPythonTools()];

/** An example program: plain text lines on standard output, as a user's program prints them. */
interface ExampleProcess {
  readonly child: ChildProcess;
  lines(): string[];
  exited(): Promise<number | null>;
}

function startExample(command: string, args: string[]): ExampleProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = once(child, "close").then(([code]) => {
    if (code !== 0) console.error(`${command} exited ${code}: ${stderr}`);
    return code as number | null;
  });
  return { child, lines: () => stdout.split("\n").filter((line) => line !== ""), exited: () => exit };
}

describe.skipIf(skipWithout(missingTools))("Go, Python and TypeScript clients against one broker", () => {
  let broker: GrpcHarness;
  let venv: Awaited<ReturnType<typeof installPythonPackage>>;
  const processes: { child: ChildProcess; exited(): Promise<unknown> }[] = [];
  const track = <T extends { child: ChildProcess; exited(): Promise<unknown> }>(started: T): T => {
    processes.push(started);
    return started;
  };
  const address = () => broker.server.address;

  beforeAll(async () => {
    expect(missingTools, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    // Generates the Go code and builds the Go programs; Go's build cache makes reruns quick.
    await promisify(execFile)("bash", [`${repoRoot}examples/build.sh`], { cwd: repoRoot });
    venv = await installPythonPackage();
    broker = await startGrpcHarness();
  }, 300_000);
  afterEach(async () => {
    for (const running of processes.splice(0)) {
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill("SIGKILL");
      await running.exited();
    }
  });
  afterAll(async () => {
    await broker?.stop();
    await venv?.remove();
  });

  it("processes the Python producer example's 1,000 messages with the Go worker example and a TypeScript Consumer, each exactly once", async () => {
    const client = new QueueClient(address());
    // First: a Consumer on a queue that does not exist stops at once with QUEUE_NOT_FOUND.
    await client.createQueue("orders");
    const goWorker = track(startExample(bin("go-worker"), ["--address", address(), "--queue", "orders"]));
    const byTypeScript: string[] = [];
    const consumer = new Consumer(client, "orders", (message) => void byTypeScript.push(message.messageId), {
      concurrency: 4,
      waitTimeMs: 1000,
    });

    const producer = track(
      startExample(venv.python, [
        `${repoRoot}examples/python/producer.py`,
        "--address",
        address(),
        "--queue",
        "orders",
        "--count",
        "1000",
      ]),
    );
    expect(await producer.exited()).toBe(0);
    const sent = producer.lines().map((line) => /^sent (\S+)$/.exec(line)![1]!);
    expect(new Set(sent).size).toBe(1000);

    await vi.waitFor(
      () =>
        expect(broker.server.broker.getQueue("orders").counts).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 }),
      { timeout: 60_000, interval: 50 },
    );
    goWorker.child.kill("SIGTERM");
    expect(await goWorker.exited(), "the Go worker stops cleanly on SIGTERM").toBe(0);
    await consumer.stop();
    client.close();

    const byGo = goWorker.lines().map((line) => /^processed (\S+) job-\d+$/.exec(line)![1]!);
    expect(byGo.length, "the Go worker took part").toBeGreaterThan(0);
    expect(byTypeScript.length, "the TypeScript Consumer took part").toBeGreaterThan(0);
    const processed = [...byGo, ...byTypeScript];
    expect(processed.length, "none processed twice").toBe(1000);
    expect(new Set(processed)).toEqual(new Set(sent));
  }, 120_000);

  it("runs the Python worker example on the Go producer example's messages and stops it cleanly on SIGTERM", async () => {
    const pythonWorker = track(
      startExample(venv.python, [`${repoRoot}examples/python/worker.py`, "--address", address(), "--queue", "emails"]),
    );
    const producer = track(
      startExample(bin("go-producer"), ["--address", address(), "--queue", "emails", "--count", "20"]),
    );
    expect(await producer.exited()).toBe(0);
    const sent = producer.lines().map((line) => /^sent (\S+)$/.exec(line)![1]!);
    expect(sent).toHaveLength(20);
    await vi.waitFor(() => expect(pythonWorker.lines()).toHaveLength(20), { timeout: 30_000, interval: 50 });
    pythonWorker.child.kill("SIGTERM");
    expect(await pythonWorker.exited(), "the Python worker stops cleanly on SIGTERM").toBe(0);
    const processed = pythonWorker.lines().map((line) => /^processed (\S+) job-\d+$/.exec(line)![1]!);
    expect(new Set(processed)).toEqual(new Set(sent));
    expect(broker.server.broker.getQueue("emails").counts).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  }, 60_000);

  it("hands a job from a Go worker killed with SIGKILL to a Python worker within a second, with the last checkpoint", async () => {
    await broker.rpc.createQueue({ name: "long-jobs" });
    await new QueueClient(address()).send("long-jobs", JSON.stringify({ steps: 100, stepMs: 100 }));
    const conformanceWorker = (command: string, args: string[]): JsonLinesProcess =>
      track(startJsonLines(command, [...args, "--address", address(), "--queue", "long-jobs"]));
    const goWorker = conformanceWorker(bin("go-conformance-worker"), []);
    await goWorker.waitFor((event) => event.event === "checkpoint" && (event.step as number) >= 3);
    const pythonWorker = conformanceWorker(venv.python, ["-u", `${repoRoot}test/conformance/workers/python_worker.py`]);
    await pythonWorker.waitFor((event) => event.event === "started");
    // The Python worker's Subscribe stream is open beside the Go worker's before the kill, so the timing measures the broker.
    await vi.waitFor(() => expect(broker.server.broker.streams.subscriberCount).toBeGreaterThanOrEqual(2), {
      timeout: 10_000,
      interval: 10,
    });

    goWorker.child.kill("SIGKILL");
    const killedAt = performance.now();
    await goWorker.exited();
    const lastReported = Math.max(
      ...goWorker.events.filter((event) => event.event === "checkpoint").map((event) => event.step as number),
    );
    const received = await pythonWorker.waitFor((event) => event.event === "received", 5000);
    const handOverMs = performance.now() - killedAt;

    expect(handOverMs, "hand-over time").toBeLessThan(1000);
    expect(received).toMatchObject({ receiveCount: 2 });
    // The kill may land after a checkpoint is stored but before the worker printed it.
    const checkpoint = Number(received.checkpoint);
    expect([lastReported, lastReported + 1]).toContain(checkpoint);
    const resumed = await pythonWorker.waitFor((event) => event.event === "checkpoint");
    expect(resumed.step).toBe(checkpoint + 1);
  }, 60_000);

  describe.each([
    {
      language: "Go",
      probe: () => startJsonLines(bin("go-probe"), ["--address", address(), "--queue-prefix", "probe-go"]),
    },
    {
      language: "Python",
      probe: () =>
        startJsonLines(venv.python, [
          `${repoRoot}test/interop/python/probe.py`,
          "--address",
          address(),
          "--queue-prefix",
          "probe-python",
        ]),
    },
  ])("a $language client", ({ probe }) => {
    let results: Record<string, Record<string, unknown>>;
    beforeAll(async () => {
      const run = track(probe());
      expect(await run.exited(), run.stderr()).toBe(0);
      results = Object.fromEntries(run.events.map((event) => [event.check as string, event]));
    }, 60_000);

    it("reads the gRPC code and the ErrorInfo reason from the rich status", () => {
      expect(results.queue_not_found).toMatchObject({ code: "NOT_FOUND", reason: "QUEUE_NOT_FOUND" });
      expect(results.lease_superseded).toMatchObject({ code: "FAILED_PRECONDITION", reason: "LEASE_SUPERSEDED" });
      expect(results.invalid_argument).toMatchObject({
        code: "INVALID_ARGUMENT",
        reason: "INVALID_ARGUMENT",
        fields: ["max_messages"],
      });
    });

    it("sees its deadline pass and its cancellation honoured, and neither poll takes the message sent after", () => {
      expect(results.deadline).toMatchObject({ code: "DEADLINE_EXCEEDED", visibleAfter: 1, inFlightAfter: 0 });
      expect(results.cancel).toMatchObject({ code: "CANCELLED", visibleAfter: 1, inFlightAfter: 0 });
    });
  });
});
