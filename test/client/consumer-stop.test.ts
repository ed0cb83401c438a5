import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { stopOnSignals } from "../../src/client/stop-on-signals.js";
import { aborted, sleep, startConsumerHarness, type ConsumerHarness, consumerModes } from "./consumer-harness.js";

describe.each(consumerModes)("Consumer.stop() ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
    // The queue's own timeout is long: a message left hidden by mistake would stay hidden.
    await c.admin.createQueue("jobs", { visibilityTimeoutMs: 30_000 });
    await c.admin.sendBatch(
      "jobs",
      Array.from({ length: 5 }, (_, i) => ({ body: String(i) })),
    );
  });
  afterEach(async () => {
    await c.stop();
  });

  it("releases the messages of handlers still running after the grace period, and renews nothing after", async () => {
    const reasons: unknown[] = [];
    let finishedAfterStop = 0;
    const consumer = c.consume(
      "jobs",
      async (_message, ctx) => {
        await aborted(ctx.signal);
        reasons.push(ctx.signal.reason);
        // Resolving now must not delete: stop() gave the message back.
        finishedAfterStop++;
      },
      { concurrency: 2, visibilityTimeoutMs: 1000, stopGraceMs: 300 },
    );
    await vi.waitFor(() => expect(consumer.active).toBe(2));
    // Long enough for the leases to be renewed, and so tracked on the stream.
    await sleep(700);
    expect(await c.stats("jobs")).toMatchObject({ visible: 3, inFlight: 2 });

    await consumer.stop();
    expect(await c.stats("jobs")).toMatchObject({ visible: 5, inFlight: 0 });
    expect(reasons).toHaveLength(2);
    for (const reason of reasons) expect(reason).toMatchObject({ name: "LeaseLostError", reason: "RELEASED" });
    expect(reasons[0]).toBeInstanceOf(LeaseLostError);
    expect(finishedAfterStop).toBe(2);
    // A renewal after the release would take a message back; none comes.
    await sleep(1500);
    expect(await c.stats("jobs")).toMatchObject({ visible: 5, inFlight: 0 });
    expect(c.errors).toEqual([]);
  });

  it("waits for handlers that finish within the grace period and settles their messages", async () => {
    const finished: string[] = [];
    const consumer = c.consume(
      "jobs",
      async (message) => {
        await sleep(600);
        finished.push(message.messageId);
      },
      { concurrency: 2, visibilityTimeoutMs: 1000, stopGraceMs: 10_000 },
    );
    await vi.waitFor(() => expect(consumer.active).toBe(2));
    await consumer.stop();
    expect(finished).toHaveLength(2);
    expect(await c.stats("jobs")).toMatchObject({ visible: 3, inFlight: 0 });
    // A stop with nothing running ends at once, and a second stop() is the same stop.
    expect(consumer.stop()).toBe(consumer.stop());
    // The clean half-close reported nothing.
    expect(c.errors).toEqual([]);
  });

  it("stops promptly when idle, cancelling its long poll without taking a message", async () => {
    await c.admin.purgeQueue("jobs");
    const consumer = c.consume("jobs", () => undefined, { waitTimeMs: 20_000 });
    await vi.waitFor(() => expect(c.streams).toHaveLength(1));
    await sleep(200);
    const started = performance.now();
    await consumer.stop();
    expect(performance.now() - started).toBeLessThan(2000);
    await c.admin.send("jobs", "after");
    expect((await c.admin.receive("jobs")).map((m) => m.receiveCount)).toEqual([1]);
    expect(c.errors).toEqual([]);
  });

  it("resolves done once stop() has finished, and stopOnSignals with it, its signal handlers removed", async () => {
    const listeners = process.listenerCount("SIGTERM");
    const handled: string[] = [];
    const consumer = c.consume("jobs", (message) => void handled.push(message.messageId));
    const signalled = stopOnSignals(consumer);
    expect(process.listenerCount("SIGTERM")).toBe(listeners + 1);
    await vi.waitFor(() => expect(handled).toHaveLength(5), { timeout: 10_000 });
    await consumer.stop();
    await expect(consumer.done).resolves.toBeUndefined();
    await expect(signalled).resolves.toBeUndefined();
    expect(process.listenerCount("SIGTERM")).toBe(listeners);
  });
});
