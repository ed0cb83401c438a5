import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RetryLater } from "../../src/client/retry-later.js";
import { deferred, startConsumerHarness, type ConsumerHarness, consumerModes } from "./consumer-harness.js";
import { text } from "../support/text.js";

describe.each(consumerModes)("Consumer retries ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
    await c.admin.createQueue("jobs", { visibilityTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await c.stop();
  });

  it("releases a failed message at once: it comes back with receiveCount 2 and the failure is reported", async () => {
    await c.admin.send("jobs", "flaky");
    const counts: number[] = [];
    const done = deferred();
    const failure = new Error("boom");
    c.consume(
      "jobs",
      (message) => {
        counts.push(message.receiveCount);
        if (message.receiveCount === 1) throw failure;
        done.resolve();
      },
      // A 30 s lease: only the release can bring the message back in time.
      { visibilityTimeoutMs: 30_000 },
    );
    await done.promise;
    expect(counts).toEqual([1, 2]);
    expect(c.errors).toEqual([failure]);
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0 }));
  });

  it("a failed message comes back after the queue's retry backoff, counted as delayed meanwhile", async () => {
    await c.admin.createQueue("backoff", {
      visibilityTimeoutMs: 30_000,
      retryPolicy: { minBackoffMs: 1000, maxBackoffMs: 1000 },
    });
    await c.admin.send("backoff", "flaky");
    let failedAt = 0;
    const failed = deferred();
    const retried = deferred<number>();
    c.consume("backoff", (message) => {
      if (message.receiveCount === 1) {
        failedAt = Date.now();
        failed.resolve();
        throw new Error("boom");
      }
      retried.resolve(Date.now());
    });
    await failed.promise;
    await vi.waitFor(async () =>
      expect(await c.stats("backoff")).toMatchObject({ visible: 0, inFlight: 0, delayed: 1 }),
    );
    const retriedAt = await retried.promise;
    expect(retriedAt - failedAt).toBeGreaterThanOrEqual(1000);
    expect(retriedAt - failedAt).toBeLessThan(1000 + 3000);
  });

  it("a handler that throws RetryLater gets the message back no sooner than its delay", async () => {
    await c.admin.send("jobs", "later");
    let failedAt = 0;
    const retried = deferred<number>();
    c.consume("jobs", (message) => {
      if (message.receiveCount === 1) {
        failedAt = Date.now();
        throw new RetryLater(1500);
      }
      retried.resolve(Date.now());
    });
    const retriedAt = await retried.promise;
    expect(retriedAt - failedAt).toBeGreaterThanOrEqual(1500);
    // It did come back: the long poll woke when the delay ran out.
    expect(retriedAt - failedAt).toBeLessThan(1500 + 3000);
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 }));
  });

  it("a checkpoint saved before a failure arrives with the next delivery", async () => {
    await c.admin.send("jobs", "resumable");
    const seen: { count: number; checkpoint: string | undefined; last: string | undefined }[] = [];
    const done = deferred();
    c.consume("jobs", async (message, ctx) => {
      seen.push({ count: message.receiveCount, checkpoint: text(message.checkpoint), last: text(ctx.lastCheckpoint) });
      if (message.receiveCount === 1) {
        await ctx.checkpoint(Buffer.from("step 2 of 3"));
        expect(text(ctx.lastCheckpoint)).toBe("step 2 of 3");
        throw new Error("crashed at step 3");
      }
      done.resolve();
    });
    await done.promise;
    expect(seen).toEqual([
      { count: 1, checkpoint: undefined, last: undefined },
      { count: 2, checkpoint: "step 2 of 3", last: "step 2 of 3" },
    ]);
  });
});
