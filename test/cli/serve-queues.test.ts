// `holdshelf serve --queues FILE` (and HOLDSHELF_QUEUES): the broker applies
// a queue definitions file as it starts, before it listens, and refuses to
// start on a file it cannot apply, with nothing changed.
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { runHoldshelf, startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { makeTempDir } from "../support/temp-dir.js";

describe("holdshelf serve --queues", () => {
  let dir: { path: string; remove(): Promise<void> };
  let broker: BrokerProcess | undefined;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    await stop();
    await dir.remove();
  });

  async function stop(): Promise<void> {
    if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
      broker.child.kill("SIGTERM");
      await once(broker.child, "exit");
    }
    broker = undefined;
  }

  async function definitions(name: string, queues: Record<string, object>): Promise<string> {
    const path = join(dir.path, name);
    const document = { version: 1, queues: Object.entries(queues).map(([queue, config]) => ({ name: queue, config })) };
    await writeFile(path, JSON.stringify(document));
    return path;
  }

  async function queues(address: string): Promise<Record<string, unknown>> {
    const client = new QueueClient(address);
    try {
      const listed = await client.listQueues();
      return Object.fromEntries(listed.queues.map((queue) => [queue.name, queue.config]));
    } finally {
      client.close();
    }
  }

  const off = ["--sqs-listen", "off", "--console-listen", "off", "--metrics-listen", "off", "--listen", "127.0.0.1:0"];
  const data = () => join(dir.path, "data");

  it("serves with the file's queues already there, and applies a changed file at the next start", async () => {
    const first = await definitions("queues.json", {
      work: { visibilityTimeout: "45s", redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 } },
      dlq: {},
    });
    broker = await startBrokerProcess(data(), ["--queues", first]);
    expect(await queues(broker.address)).toMatchObject({
      dlq: {},
      work: { visibilityTimeoutMs: 45_000, redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 } },
    });
    expect(broker.logs()).toContain('"msg":"queues applied"');
    expect(broker.logs()).toContain('"created":["dlq","work"]');
    await stop();

    const second = await definitions("queues.json", { work: { visibilityTimeout: "60s" }, dlq: {} });
    broker = await startBrokerProcess(data(), ["--queues", second]);
    expect(broker.logs()).toContain('"created":[],"updated":["work"],"unchanged":1');
    const { work } = (await queues(broker.address)) as {
      work: { visibilityTimeoutMs: number; redrivePolicy?: object };
    };
    expect(work.visibilityTimeoutMs).toBe(60_000);
    expect(work.redrivePolicy).toBeUndefined();
  });

  it("refuses to start on a file it cannot apply, with exit code 1, a message naming the file, and nothing changed", async () => {
    const good = await definitions("good.json", { a: {} });
    broker = await startBrokerProcess(data(), ["--queues", good]);
    await stop();

    const fifoChange = await definitions("fifo.json", { first: {}, a: { fifo: true } });
    const refused = await runHoldshelf(["serve", "--data-dir", data(), ...off, "--queues", fifoChange]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"msg":"cannot start"');
    expect(refused.stderr).toContain(`${fifoChange}: queue \\"a\\" is standard on the broker and FIFO in the file`);

    const unknown = join(dir.path, "unknown.json");
    await writeFile(unknown, JSON.stringify({ version: 1, queues: [{ name: "b", config: { visiblity: "1s" } }] }));
    const fromEnv = await runHoldshelf(["serve", "--data-dir", data(), ...off], { HOLDSHELF_QUEUES: unknown });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(`${unknown}: queues[0] (\\"b\\").config:`);

    const missing = await runHoldshelf([
      "serve",
      "--data-dir",
      data(),
      ...off,
      "--queues",
      join(dir.path, "nope.json"),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ENOENT");

    broker = await startBrokerProcess(data());
    expect(Object.keys(await queues(broker.address))).toEqual(["a"]);
  });
});
