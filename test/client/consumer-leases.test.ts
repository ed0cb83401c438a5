import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { ReceivedMessage } from "../../src/client/types.js";
import {
  aborted,
  deferred,
  sleep,
  startConsumerHarness,
  type ConsumerHarness,
  consumerModes,
} from "./consumer-harness.js";

// Real time: leases of 1000 ms, renewed every ~300 ms, so each test holds a
// lease several times longer than its timeout. Margins are wide enough for a
// loaded two-core machine: a renewal has ~700 ms to be answered.
describe.each(consumerModes)("Consumer leases ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
    await c.admin.createQueue("jobs", { visibilityTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await c.stop();
  });

  it("keeps a message leased through a handler 3.5 times longer than the visibility timeout: one delivery", async () => {
    await c.admin.send("jobs", "long job");
    const deliveries: ReceivedMessage[] = [];
    const started = deferred();
    const finished = deferred();
    c.consume("jobs", async (message, ctx) => {
      deliveries.push(message);
      started.resolve();
      await sleep(3500);
      expect(ctx.signal.aborted).toBe(false);
      finished.resolve();
    });
    await started.promise;
    // Another consumer polling the whole time gets nothing.
    expect(await c.admin.receive("jobs", { waitTimeMs: 3000 })).toEqual([]);
    await finished.promise;
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 }));
    expect(deliveries.map((m) => m.receiveCount)).toEqual([1]);
    expect(c.streams).toHaveLength(1);
    expect(c.errors).toEqual([]);
  });

  it("aborts the handler's signal when the lease is lost: the message was deleted by someone else", async () => {
    await c.admin.send("jobs", "doomed");
    const delivered = deferred<ReceivedMessage>();
    const reason = deferred<unknown>();
    c.consume("jobs", async (message, ctx) => {
      delivered.resolve(message);
      await aborted(ctx.signal);
      reason.resolve(ctx.signal.reason);
    });
    const message = await delivered.promise;
    await c.admin.delete("jobs", message.receiptHandle);
    const lost = await reason.promise;
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect(lost).toMatchObject({ reason: "MESSAGE_NOT_FOUND", receiptHandle: message.receiptHandle });
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0 }));
  });

  it("reports a message dead-lettered before its handler's delete as a lost lease (DEAD_LETTERED), not as done", async () => {
    await c.admin.createQueue("dlq");
    await c.admin.createQueue("once", {
      visibilityTimeoutMs: 1000,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
    });
    await c.admin.send("once", "late");
    const handled = deferred();
    c.consume("once", async (message) => {
      // Its last delivery released: the broker moves it to the dead-letter queue. The delete must come
      // after the move, not race it: reading the queues runs the move that is due.
      await c.admin.changeVisibility("once", message.receiptHandle, 0);
      while ((await c.stats("dlq")).visible < 1) await c.stats("once");
      handled.resolve();
    });
    await handled.promise;
    await vi.waitFor(() => expect(c.errors).toHaveLength(1));
    expect(c.errors[0]).toBeInstanceOf(LeaseLostError);
    expect((c.errors[0] as LeaseLostError).reason).toBe("DEAD_LETTERED");
    expect(await c.stats("dlq")).toMatchObject({ visible: 1 });
  });

  it("reopens a broken stream and renews the leases still held on the new one", async () => {
    await c.admin.send("jobs", "survivor");
    const deliveries: ReceivedMessage[] = [];
    const started = deferred();
    const finished = deferred<boolean>();
    c.consume("jobs", async (message, ctx) => {
      deliveries.push(message);
      started.resolve();
      await sleep(3000);
      finished.resolve(ctx.signal.aborted);
    });
    await started.promise;
    // Past the first renewal, so that the server tracks the lease on the
    // stream and releases it when the stream breaks.
    await sleep(1200);
    c.streams[0]!.cancel();
    // The break released the lease on the server; the new stream's first
    // request takes it back, and its renewals keep it: a competitor polling
    // past the lease's length gets nothing.
    await vi.waitFor(() => expect(c.streams).toHaveLength(2));
    await sleep(300);
    expect(await c.admin.receive("jobs", { waitTimeMs: 1200 })).toEqual([]);
    expect(await finished.promise).toBe(false);
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0 }));
    expect(deliveries.map((m) => m.receiveCount)).toEqual([1]);
    expect(c.streams).toHaveLength(2);
    expect(c.errors).toHaveLength(1);
    expect(c.errors[0]).toBeInstanceOf(RpcError);
    expect((c.errors[0] as RpcError).code).toBe(status.CANCELLED);
  });

  it("keeps a slot for a handler that runs on after its lease was lost: the next message waits for it", async () => {
    await c.admin.send("jobs", "first");
    const order: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const lost = deferred();
    c.consume("jobs", async (message, ctx) => {
      const body = Buffer.from(message.body).toString();
      maxRunning = Math.max(maxRunning, ++running);
      order.push(`start ${body}`);
      if (body === "first") {
        // Someone else deletes it: its lease is lost, and on Subscribe its credit is free at once.
        await c.admin.send("jobs", "second");
        await c.admin.delete("jobs", message.receiptHandle);
        await aborted(ctx.signal);
        lost.resolve();
        // The handler ignores the loss a while longer.
        await sleep(800);
      }
      order.push(`end ${body}`);
      running--;
    });
    await lost.promise;
    await vi.waitFor(() => expect(order).toContain("end second"), { timeout: 10_000 });
    expect(order).toEqual(["start first", "end first", "start second", "end second"]);
    expect(maxRunning).toBe(1);
  });

  it("never works on more than `concurrency` messages, nor holds more leases", async () => {
    await c.admin.sendBatch(
      "jobs",
      Array.from({ length: 10 }, (_, i) => ({ body: String(i) })),
    );
    let running = 0;
    let maxRunning = 0;
    const done = new Set<string>();
    c.consume(
      "jobs",
      async (message) => {
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(250);
        running--;
        done.add(message.messageId);
      },
      { concurrency: 3 },
    );
    let maxInFlight = 0;
    while (done.size < 10) {
      maxInFlight = Math.max(maxInFlight, (await c.stats("jobs")).inFlight);
      await sleep(20);
    }
    await vi.waitFor(async () => expect(await c.stats("jobs")).toMatchObject({ visible: 0, inFlight: 0 }));
    expect(maxRunning).toBe(3);
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(c.errors).toEqual([]);
  });
});
