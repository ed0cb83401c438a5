/**
 * The ordered-per-customer examples of docs/fifo.md, in TypeScript, Go and
 * Python: the page quotes each file whole, and each runs against a real
 * broker as a user would run it. The producer runs twice (the second run's
 * sends are duplicates: nothing more is stored, and each returns the first
 * send's sequence number); the consumer, with concurrency 4, must process
 * every order once and each customer's in the order they were sent, then
 * stop on SIGTERM with status 0 and leave the queue empty.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { installPythonPackage, missingPythonTools } from "../support/python-package.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { quotedFiles } from "./quoted-files.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const customers = 4;
const ordersPerCustomer = 5;

const examples = {
  typescript: "examples/typescript/fifo-orders.ts",
  go: "examples/go/fifo-orders/main.go",
  python: "examples/python/fifo_orders.py",
};

describe("code blocks that quote a file", () => {
  const markdownFiles = [
    "README.md",
    ...readdirSync(path.join(root, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`),
  ];

  it.each(markdownFiles)("in %s match the file they quote", (file) => {
    for (const quoted of quotedFiles(root, file)) {
      expect(existsSync(path.join(root, quoted.file)), `${quoted.where}: ${quoted.file} does not exist`).toBe(true);
      expect(quoted.code, `${quoted.where} quotes ${quoted.file}`).toBe(
        readFileSync(path.join(root, quoted.file), "utf8"),
      );
    }
  });

  it("include each FIFO example in docs/fifo.md", () => {
    expect(quotedFiles(root, "docs/fifo.md").map((quoted) => quoted.file)).toEqual(Object.values(examples));
  });
});

/** An example program's run: its output lines, and its exit. */
interface ExampleRun {
  readonly lines: string[];
  /** Resolves once `count` lines start with `prefix`. */
  printed(prefix: string, count: number): Promise<void>;
  exited(): Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

function startExample(command: string, args: string[]): ExampleRun {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop()!;
    lines.push(...parts.filter((line) => line !== ""));
    for (const waiter of [...waiters]) waiter();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = once(child, "close").then(([code]) => {
    if (code !== 0) console.error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`);
    return code as number | null;
  });
  return {
    lines,
    printed: (prefix, count) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (lines.filter((line) => line.startsWith(prefix)).length < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        void exit.then(() =>
          reject(
            new Error(`${command} exited before printing ${count} "${prefix}" lines: ${lines.join("; ")} ${stderr}`),
          ),
        );
        check();
      }),
    exited: () => exit,
    kill: (signal) => child.kill(signal),
  };
}

/** A language's way to run its example: the command and the arguments before the example's own. */
interface Runner {
  readonly command: string;
  readonly args: readonly string[];
}

const missingGo = missingCommands(["go", "protoc-gen-go", "protoc-gen-go-grpc"]);
const missingPython = missingPythonTools();
// The TypeScript example is built against the compiled package (npm run build).
const missingTypeScript = existsSync(path.join(root, "dist/src/index.d.ts")) ? [] : ["dist/ (npm run build)"];

describe("the ordered-per-customer examples against a broker", () => {
  let broker: GrpcHarness;
  const running: ExampleRun[] = [];
  beforeAll(async () => {
    broker = await startGrpcHarness();
  });
  afterEach(async () => {
    for (const example of running.splice(0)) {
      example.kill("SIGKILL");
      await example.exited();
    }
  });
  afterAll(async () => {
    await broker?.stop();
  });

  /** Runs the example's producer twice and its consumer, and checks what they printed and left. */
  async function produceAndConsume(runner: Runner, queue: string): Promise<void> {
    const start = (...args: string[]): ExampleRun => {
      const example = startExample(runner.command, [
        ...runner.args,
        ...args,
        "--address",
        broker.server.address,
        "--queue",
        queue,
      ]);
      running.push(example);
      return example;
    };
    const sizes = ["--customers", String(customers), "--orders", String(ordersPerCustomer)];
    const producer = start("produce", ...sizes);
    expect(await producer.exited()).toBe(0);
    const sent = producer.lines.map((line) => line.split(" "));
    expect(sent).toHaveLength(customers * ordersPerCustomer);
    for (const [word, customer, order, sequenceNumber] of sent) {
      expect(word).toBe("sent");
      expect(order!.startsWith(`${customer}-order-`)).toBe(true);
      expect(sequenceNumber).toMatch(/^\d{20}$/);
    }
    const numbers = sent.map(([, , , sequenceNumber]) => sequenceNumber!);
    expect([...numbers].sort()).toEqual(numbers);

    // Run again: every send is a duplicate, answered with the first send's sequence number, and nothing more is stored.
    const again = start("produce", ...sizes);
    expect(await again.exited()).toBe(0);
    expect(again.lines).toEqual(producer.lines);
    expect(broker.server.broker.getQueue(queue).counts).toMatchObject({
      visible: customers * ordersPerCustomer,
      inFlight: 0,
    });

    const consumer = start("consume");
    await consumer.printed("processed ", customers * ordersPerCustomer);
    consumer.kill("SIGTERM");
    expect(await consumer.exited()).toBe(0);
    const processed = consumer.lines.map((line) => line.split(" "));
    expect(processed.every(([word]) => word === "processed")).toBe(true);
    expect(processed).toHaveLength(customers * ordersPerCustomer);
    for (let c = 1; c <= customers; c++) {
      const customer = `customer-${c}`;
      const ofCustomer = (lines: string[][]) =>
        lines.filter(([, group]) => group === customer).map(([, , order, sequenceNumber]) => [order, sequenceNumber]);
      expect(ofCustomer(processed), customer).toEqual(ofCustomer(sent));
    }
    await expect
      .poll(() => broker.server.broker.getQueue(queue).counts)
      .toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  }

  it.skipIf(skipWithout(missingTypeScript))(
    "TypeScript: examples/typescript/fifo-orders.ts",
    async () => {
      expect(missingTypeScript, "build the package first").toEqual([]);
      // Type-checked and compiled as a user's program, against the package "holdshelf" (this repository's own, by its name).
      await run(
        process.execPath,
        [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "examples/typescript/tsconfig.json"],
        { cwd: root },
      );
      await produceAndConsume(
        { command: process.execPath, args: [path.join(root, ".build/examples/typescript/fifo-orders.js")] },
        "ts-orders.fifo",
      );
    },
    120_000,
  );

  it.skipIf(skipWithout(missingGo))(
    "Go: examples/go/fifo-orders",
    async () => {
      expect(missingGo, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
      await run("bash", [path.join(root, "examples/build.sh")], { cwd: root });
      await produceAndConsume({ command: path.join(root, ".build/bin/go-fifo-orders"), args: [] }, "go-orders.fifo");
    },
    300_000,
  );

  it.skipIf(skipWithout(missingPython))(
    "Python: examples/python/fifo_orders.py",
    async () => {
      expect(missingPython, "toolchains missing (Debian packages: see .ci/run)").toEqual([]);
      const venv = await installPythonPackage();
      try {
        await produceAndConsume({ command: venv.python, args: [path.join(root, examples.python)] }, "py-orders.fifo");
      } finally {
        await venv.remove();
      }
    },
    180_000,
  );
});
