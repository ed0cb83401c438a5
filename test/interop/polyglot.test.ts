/**
 * Real Go and Python clients, generated from proto/ with Debian's
 * generators, against a real broker: the examples under examples/ side by
 * side with the TypeScript Consumer, a Go worker killed mid-job whose lease
 * and checkpoint pass to a Python worker, and each language's view of error
 * codes, ErrorInfo reasons, deadlines and cancellation (test/interop/*​/probe).
 */
import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Consumer } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { startJsonLines, type JsonLinesProcess } from "../support/json-lines-process.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => `${repoRoot}.build/bin/${name}`;
// Debian's interpreter: the one python3-grpcio is installed for.
const python = "/usr/bin/python3";
const pythonEnv = { PYTHONPATH: `${repoRoot}.build/python` };

const missingTools = missingCommands(["go", "protoc", "grpc_python_plugin", "protoc-gen-go", "protoc-gen-go-grpc"]);
if (spawnSync(python, ["-c", "import grpc"]).status !== 0) missingTools.push("python3-grpcio");

describe.skipIf(skipWithout(missingTools))("Go and Python clients against the broker", () => {
  let broker: GrpcHarness;
  const processes: JsonLinesProcess[] = [];
  const track = (started: JsonLinesProcess): JsonLinesProcess => {
    processes.push(started);
    return started;
  };
  const startGo = (name: string, args: string[]) =>
    track(startJsonLines(bin(name), ["--address", broker.server.address, ...args]));
  const startPython = (script: string, args: string[]) =>
    track(startJsonLines(python, [`${repoRoot}${script}`, "--address", broker.server.address, ...args], pythonEnv));

  beforeAll(async () => {
    expect(missingTools, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
    // Generates both languages' code and builds the Go programs; Go's build cache makes reruns quick.
    await promisify(execFile)("bash", [`${repoRoot}examples/build.sh`], { cwd: repoRoot });
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
  });

  it("processes a Python producer's 1,000 messages with a Go worker and a TypeScript Consumer, each exactly once", async () => {
    const producer = startPython("examples/python/producer.py", ["--queue", "orders", "--count", "1000"]);
    expect(await producer.exited(), producer.stderr()).toBe(0);
    const sent = producer.events.filter((event) => event.event === "sent").map((event) => event.messageId as string);
    expect(new Set(sent).size).toBe(1000);

    const goWorker = startGo("go-worker", ["--queue", "orders", "--steps", "0", "--exit-when-idle"]);
    await goWorker.waitFor((event) => event.event === "received");
    const client = new QueueClient(broker.server.address);
    const byTypeScript: string[] = [];
    const consumer = new Consumer(client, "orders", (message) => void byTypeScript.push(message.messageId), {
      concurrency: 4,
      waitTimeMs: 1000,
    });
    expect(await goWorker.exited(), goWorker.stderr()).toBe(0);
    await consumer.stop();
    client.close();

    const byGo = goWorker.events.filter((event) => event.event === "processed").map((event) => event.messageId as string);
    expect(byGo.length, "the Go worker took part").toBeGreaterThan(0);
    expect(byTypeScript.length, "the TypeScript Consumer took part").toBeGreaterThan(0);
    const processed = [...byGo, ...byTypeScript];
    expect(processed.length, "none processed twice").toBe(1000);
    expect(new Set(processed)).toEqual(new Set(sent));
    const goDeliveries = goWorker.events.filter((event) => event.event === "received");
    expect(goDeliveries.every((event) => event.receiveCount === 1), "no redelivery").toBe(true);
    expect(goWorker.events.filter((event) => event.event === "error")).toEqual([]);
    expect(broker.server.broker.getQueue("orders").counts).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  }, 120_000);

  it("hands a job from a Go worker killed with SIGKILL to a Python worker within a second, with the last checkpoint", async () => {
    const producer = startPython("examples/python/producer.py", ["--queue", "long-jobs", "--count", "1", "--prefix", "render"]);
    expect(await producer.exited(), producer.stderr()).toBe(0);
    const goWorker = startGo("go-worker", ["--queue", "long-jobs", "--steps", "100", "--step-ms", "100"]);
    await goWorker.waitFor((event) => event.event === "checkpoint" && (event.step as number) >= 3);
    // The Python worker is up and long-polling before the kill, so the timing measures the broker.
    const pythonWorker = startPython("examples/python/worker.py", ["--queue", "long-jobs", "--steps", "100", "--step-ms", "100"]);
    await pythonWorker.waitFor((event) => event.event === "polling");

    goWorker.child.kill("SIGKILL");
    const killedAt = performance.now();
    await goWorker.exited();
    const lastReported = Math.max(
      ...goWorker.events.filter((event) => event.event === "checkpoint").map((event) => event.step as number),
    );
    const received = await pythonWorker.waitFor((event) => event.event === "received", 5000);
    const handOverMs = performance.now() - killedAt;

    expect(handOverMs, "hand-over time").toBeLessThan(1000);
    expect(received).toMatchObject({ body: "render-0", receiveCount: 2 });
    // The kill may land after a checkpoint is stored but before the worker printed it.
    const checkpoint = Number(received.checkpoint);
    expect([lastReported, lastReported + 1]).toContain(checkpoint);
    const resumed = await pythonWorker.waitFor((event) => event.event === "checkpoint");
    expect(resumed.step).toBe(checkpoint + 1);
  }, 60_000);

  describe.each([
    { language: "Go", probe: () => startGo("go-probe", ["--queue-prefix", "probe-go"]) },
    { language: "Python", probe: () => startPython("test/interop/python/probe.py", ["--queue-prefix", "probe-python"]) },
  ])("a $language client", ({ probe }) => {
    let results: Record<string, Record<string, unknown>>;
    beforeAll(async () => {
      const run = probe();
      expect(await run.exited(), run.stderr()).toBe(0);
      results = Object.fromEntries(run.events.map((event) => [event.check as string, event]));
    }, 60_000);

    it("reads the gRPC code and the ErrorInfo reason from the rich status", () => {
      expect(results.queue_not_found).toMatchObject({ code: "NOT_FOUND", reason: "QUEUE_NOT_FOUND" });
      expect(results.lease_superseded).toMatchObject({ code: "FAILED_PRECONDITION", reason: "LEASE_SUPERSEDED" });
      expect(results.invalid_argument).toMatchObject({ code: "INVALID_ARGUMENT", reason: "INVALID_ARGUMENT", fields: ["max_messages"] });
    });

    it("sees its deadline pass and its cancellation honoured, and neither poll takes the message sent after", () => {
      expect(results.deadline).toMatchObject({ code: "DEADLINE_EXCEEDED", visibleAfter: 1, inFlightAfter: 0 });
      expect(results.cancel).toMatchObject({ code: "CANCELLED", visibleAfter: 1, inFlightAfter: 0 });
    });
  });
});
