// A consumer process holding messages on a Subscribe stream, killed with
// SIGKILL: with release_on_disconnect its messages are visible again at once
// (the broken stream releases them), without it they come back only when the
// stream's visibility timeout runs out.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const consumerScript = fileURLToPath(new URL("../fixtures/subscribe-and-hang.mjs", import.meta.url));
const held = 3;

describe("a Subscribe consumer process killed with SIGKILL", () => {
  let h: GrpcHarness;
  let worker: ChildProcess | undefined;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(30_000) } });
    for (let i = 0; i < held; i++) await h.rpc.send({ queue: "jobs", body: Buffer.from(`job ${i}`) });
  });
  afterEach(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      worker.kill("SIGKILL");
      await once(worker, "exit");
    }
    await h.stop();
  });

  /** Starts the consumer and waits until it holds every message; returns their ids. */
  async function consumer(release: boolean, visibilityMs: number): Promise<string[]> {
    worker = spawn(
      process.execPath,
      [consumerScript, h.server.address, "jobs", String(held), release ? "release" : "keep", String(visibilityMs)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const [line] = (await once(worker.stdout!, "data")) as [Buffer];
    const { held: ids } = JSON.parse(line.toString()) as { held: string[] };
    expect(ids).toHaveLength(held);
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 3n });
    return ids;
  }

  async function kill(): Promise<void> {
    worker!.kill("SIGKILL");
    await once(worker!, "exit");
  }

  /** Receives until `count` messages came or `waitMs` passed; returns them. */
  async function receiveAll(count: number, waitMs: number) {
    const messages = [];
    const deadline = Date.now() + waitMs;
    while (messages.length < count && Date.now() < deadline) {
      const waitTime = durationFromMs(Math.max(0, Math.min(5_000, deadline - Date.now())));
      messages.push(...(await h.rpc.receive({ queue: "jobs", maxMessages: 10, waitTime })).messages);
    }
    return messages;
  }

  it("with release_on_disconnect: its messages are delivered again at once, not after their 30 s lease", async () => {
    const ids = await consumer(true, 30_000);
    await kill();
    const started = performance.now();
    const messages = await receiveAll(held, 5_000);
    expect(messages.map((m) => m.messageId).sort()).toEqual([...ids].sort());
    expect(messages.every((m) => m.receiveCount === 2)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it("without it: its messages stay leased until the stream's visibility timeout, then come back", async () => {
    const leaseMs = 3_000;
    const leasedAt = Date.now();
    const ids = await consumer(false, leaseMs);
    await kill();
    // The broker saw the break, well before the lease ends: nothing came back.
    await expect.poll(() => h.server.broker.streams.subscriberCount, { timeout: 2_000 }).toBe(0);
    expect(Date.now() - leasedAt).toBeLessThan(leaseMs);
    expect((await h.rpc.receive({ queue: "jobs", maxMessages: 10 })).messages).toEqual([]);
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 3n });
    const messages = await receiveAll(held, leaseMs + 5_000);
    expect(messages.map((m) => m.messageId).sort()).toEqual([...ids].sort());
  });
});
