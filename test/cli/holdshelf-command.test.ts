import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runHoldshelf, startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { makeTempDir } from "../support/temp-dir.js";

describe("the holdshelf command", () => {
  let dir: { path: string; remove(): Promise<void> };
  let broker: BrokerProcess | undefined;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
      broker.child.kill("SIGKILL");
      await once(broker.child, "exit");
    }
    broker = undefined;
    await dir.remove();
  });

  it("runs the lifecycle from the shell and stops cleanly on SIGTERM", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const env = { HOLDSHELF_ADDRESS: broker.address };
    expect((await runHoldshelf(["queue", "create", "jobs", "--visibility-timeout", "45s"], env)).code).toBe(0);
    const sent = await runHoldshelf(["send", "jobs", "hello", "--attribute", "kind=greeting"], env);
    const { messageId } = JSON.parse(sent.stdout) as { messageId: string };
    const received = await runHoldshelf(["receive", "jobs", "--max", "10"], env);
    const message = JSON.parse(received.stdout) as {
      messageId: string;
      body: string;
      receiptHandle: string;
      attributes: object;
    };
    expect(message).toMatchObject({ messageId, body: "hello", attributes: { kind: "greeting" } });
    const queue = JSON.parse((await runHoldshelf(["queue", "get", "jobs"], env)).stdout) as {
      stats: object;
      config: object;
    };
    expect(queue.stats).toMatchObject({ inFlight: 1 });
    expect(queue.config).toMatchObject({ visibilityTimeout: "45s" });
    expect((await runHoldshelf(["delete", "jobs", message.receiptHandle], env)).code).toBe(0);
    expect((await runHoldshelf(["queue", "list"], env)).stdout).toContain('"name":"jobs"');

    broker.child.kill("SIGTERM");
    const [code] = await once(broker.child, "exit");
    expect(code).toBe(0);
    expect(broker.logs()).toContain('"msg":"stopped"');
  });

  it("prints the stable reason and exits 1 when a call fails", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const result = await runHoldshelf(["queue", "get", "missing"], { HOLDSHELF_ADDRESS: broker.address });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("QUEUE_NOT_FOUND");
  });

  it("configures dead-letter queues and redrives from the shell", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const env = { HOLDSHELF_ADDRESS: broker.address };
    expect((await runHoldshelf(["queue", "create", "dlq"], env)).code).toBe(0);
    const created = await runHoldshelf(
      [
        "queue",
        "create",
        "work",
        "--dead-letter-queue",
        "dlq",
        "--max-receive-count",
        "3",
        "--min-backoff",
        "1s",
        "--max-backoff",
        "1m",
      ],
      env,
    );
    expect(JSON.parse(created.stdout)).toMatchObject({
      config: {
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoff: "1s", maxBackoff: "60s" },
      },
    });
    expect(JSON.parse((await runHoldshelf(["redrive", "dlq", "--to", "work", "--rate", "10"], env)).stdout)).toEqual({
      moved: 0,
    });
    const refused = await runHoldshelf(["queue", "delete", "dlq"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("QUEUE_IN_USE");
  });

  it("starts a redrive as a move task with --async, lists move tasks and cancels one by its handle", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const env = { HOLDSHELF_ADDRESS: broker.address };
    for (const name of ["dlq", "work"]) expect((await runHoldshelf(["queue", "create", name], env)).code).toBe(0);
    // 60 messages at one a second: the task still runs when it is cancelled, however slowly the commands start on a loaded machine.
    const client = new QueueClient(broker.address);
    try {
      for (let batch = 0; batch < 6; batch++) {
        await client.sendBatch(
          "dlq",
          Array.from({ length: 10 }, (_, i) => ({ body: `m${batch * 10 + i}` })),
        );
      }
    } finally {
      client.close();
    }
    const started = await runHoldshelf(["redrive", "dlq", "--to", "work", "--rate", "1", "--async"], env);
    const { taskHandle } = JSON.parse(started.stdout) as { taskHandle: string };
    expect(taskHandle).toMatch(/^[A-Za-z0-9_-]+$/);
    const running = JSON.parse((await runHoldshelf(["move-tasks", "dlq"], env)).stdout) as object;
    expect(running).toMatchObject({
      taskHandle,
      status: "RUNNING",
      sourceQueue: "dlq",
      destinationQueue: "work",
      maxPerSecond: 1,
      toMoveCount: 60,
    });
    const cancelled = JSON.parse((await runHoldshelf(["move-tasks", "cancel", taskHandle], env)).stdout) as {
      moved: number;
    };
    expect(cancelled.moved).toBeLessThan(60);
    expect(JSON.parse((await runHoldshelf(["move-tasks", "dlq"], env)).stdout)).toMatchObject({
      status: "CANCELLED",
      movedCount: cancelled.moved,
    });
    const again = await runHoldshelf(["move-tasks", "cancel", taskHandle], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("MOVE_TASK_NOT_FOUND");
  });

  it("peeks at a queue a page at a time or --all, leasing nothing", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const env = { HOLDSHELF_ADDRESS: broker.address };
    expect((await runHoldshelf(["queue", "create", "browse"], env)).code).toBe(0);
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) {
      ids.push(
        (JSON.parse((await runHoldshelf(["send", "browse", text], env)).stdout) as { messageId: string }).messageId,
      );
    }
    const lines = (result: { stdout: string }): Record<string, unknown>[] =>
      result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const firstPage = lines(await runHoldshelf(["peek", "browse", "--page-size", "2"], env));
    expect(firstPage.slice(0, 2)).toMatchObject([
      { messageId: ids[0], body: "one", state: "VISIBLE", receiveCount: 0 },
      { messageId: ids[1], body: "two", state: "VISIBLE" },
    ]);
    const { nextPageToken } = firstPage[2] as { nextPageToken: string };
    expect(lines(await runHoldshelf(["peek", "browse", "--page-token", nextPageToken], env))).toMatchObject([
      { body: "three" },
    ]);
    const all = lines(await runHoldshelf(["peek", "browse", "--page-size", "1", "--all"], env));
    expect(all.map((message) => message["body"])).toEqual(["one", "two", "three"]);
    const queue = JSON.parse((await runHoldshelf(["queue", "get", "browse"], env)).stdout) as { stats: object };
    expect(queue.stats).toMatchObject({ visible: 3, inFlight: 0 });
    const refused = await runHoldshelf(["peek", "browse", "--page-size", "101"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("INVALID_ARGUMENT");
  });

  it("exits 2 with usage on a bad flag value", async () => {
    const result = await runHoldshelf(["queue", "create", "q", "--delay", "soon"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--delay takes a duration");
  });

  it("refuses a data directory another broker holds, a taken port, and an unusable directory", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const inUse = await runHoldshelf(["serve", "--data-dir", join(dir.path, "data"), "--listen", "127.0.0.1:0"]);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toContain("is in use by another holdshelf process");

    const portTaken = await runHoldshelf(["serve", "--data-dir", join(dir.path, "other"), "--listen", broker.address]);
    expect(portTaken.code).toBe(1);
    expect(portTaken.stderr).toContain(`cannot listen on ${broker.address}`);

    const file = join(dir.path, "a-file");
    await writeFile(file, "not a directory");
    const unusable = await runHoldshelf(["serve", "--data-dir", file, "--listen", "127.0.0.1:0"]);
    expect(unusable.code).toBe(1);
    expect(unusable.stderr).toContain(`cannot open data directory ${file}`);
  });

  it("serves metrics and probes on --metrics-listen, and refuses a taken or malformed metrics address", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"));
    const metrics = await fetch(`http://${broker.metricsAddress}/metrics`);
    expect(await metrics.text()).toContain("# TYPE holdshelf_messages gauge");
    expect((await fetch(`http://${broker.metricsAddress}/readyz`)).status).toBe(200);

    const serveOther = (metricsListen: string) =>
      runHoldshelf([
        "serve",
        "--data-dir",
        join(dir.path, "other"),
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        metricsListen,
      ]);
    const taken = await serveOther(broker.metricsAddress);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`cannot listen on ${broker.metricsAddress} for metrics: EADDRINUSE`);
    const malformed = await serveOther("localhost");
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('cannot listen on \\"localhost\\": expected host:port');
  });

  it("runs without a metrics listener when told --metrics-listen off", async () => {
    broker = await startBrokerProcess(join(dir.path, "data"), ["--metrics-listen", "off"]);
    expect(broker.metricsAddress).toBe("off");
  });

  it("loses nothing acknowledged when killed with SIGKILL", async () => {
    const dataDir = join(dir.path, "data");
    broker = await startBrokerProcess(dataDir);
    let env = { HOLDSHELF_ADDRESS: broker.address };
    await runHoldshelf(["queue", "create", "durable", "--visibility-timeout", "1h"], env);
    for (const body of ["one", "two", "three"]) await runHoldshelf(["send", "durable", body], env);
    const leased = JSON.parse((await runHoldshelf(["receive", "durable"], env)).stdout) as {
      body: string;
      receiptHandle: string;
    };
    expect(leased.body).toBe("one");

    broker.child.kill("SIGKILL");
    await once(broker.child, "exit");
    broker = await startBrokerProcess(dataDir);
    env = { HOLDSHELF_ADDRESS: broker.address };

    const stats = JSON.parse((await runHoldshelf(["queue", "get", "durable"], env)).stdout) as { stats: object };
    expect(stats.stats).toMatchObject({ visible: 2, inFlight: 1 });
    const rest = (await runHoldshelf(["receive", "durable", "--max", "10"], env)).stdout.trim().split("\n");
    expect(rest.map((line) => (JSON.parse(line) as { body: string }).body)).toEqual(["two", "three"]);
    // The lease survived with its handle.
    expect((await runHoldshelf(["delete", "durable", leased.receiptHandle], env)).code).toBe(0);
  });
});
