import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LeaseStream } from "../../src/broker/lease-tracking.js";
import {
  counts,
  createQueue,
  openBrokerHarness,
  receiveOne,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 10_000;

/** A renewal with `failed`: how a Consumer reports that its handler failed. */
describe("a lease ended as a failed delivery", () => {
  let h: BrokerHarness;
  let stream: LeaseStream;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "dlq");
    await createQueue(h, "jobs", {
      visibilityTimeoutMs: vt,
      retryPolicy: { minBackoffMs: 1000, maxBackoffMs: 3000 },
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 4 },
    });
    stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it("comes back after the queue's retry backoff for its receive count, counted as delayed meanwhile", async () => {
    await sendText(h, "jobs", "flaky");
    const waits: number[] = [];
    for (let receiveCount = 1; receiveCount <= 3; receiveCount++) {
      const delivery = await receiveOne(h, "jobs");
      expect(delivery.receiveCount).toBe(receiveCount);
      const [state] = await h.broker.streams.renew(stream, "jobs", [
        { receiptHandle: delivery.receiptHandle, failed: true },
      ]);
      expect(state).toEqual({
        receiptHandle: delivery.receiptHandle,
        held: false,
        leaseDeadline: h.clock.now(),
        reason: "RELEASED",
      });
      expect(stream.tracked.size, "the stream stops tracking it").toBe(0);
      expect(counts(h, "jobs")).toMatchObject({ visible: 0, inFlight: 0, delayed: 1 });
      let waited = 0;
      while (counts(h, "jobs").visible === 0) {
        h.clock.advance(100);
        waited += 100;
      }
      waits.push(waited);
    }
    // min(3000, 1000 * 2^(n-1)): 1 s, 2 s, then capped at 3 s.
    expect(waits).toEqual([1000, 2000, 3000]);
  });

  it("comes back after the delay it names instead (a retry later), storing its checkpoint", async () => {
    await sendText(h, "jobs", "later");
    const delivery = await receiveOne(h, "jobs");
    await h.broker.streams.renew(stream, "jobs", [
      {
        receiptHandle: delivery.receiptHandle,
        failed: true,
        visibilityTimeoutMs: 250,
        checkpoint: Buffer.from("step 3"),
      },
    ]);
    h.clock.advance(249);
    expect(counts(h, "jobs")).toMatchObject({ visible: 0, delayed: 1 });
    h.clock.advance(1);
    const again = await receiveOne(h, "jobs");
    expect(again.messageId).toBe(delivery.messageId);
    expect(text(again.checkpoint)).toBe("step 3");
  });

  it("goes to the dead-letter queue at once when its receives are spent, even with a delay named", async () => {
    await sendText(h, "jobs", "poison");
    for (let receiveCount = 1; receiveCount < 4; receiveCount++) {
      const delivery = await receiveOne(h, "jobs");
      await h.broker.streams.renew(stream, "jobs", [
        { receiptHandle: delivery.receiptHandle, failed: true, visibilityTimeoutMs: 0 },
      ]);
    }
    const last = await receiveOne(h, "jobs");
    expect(last.receiveCount).toBe(4);
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: last.receiptHandle, failed: true, visibilityTimeoutMs: 60_000 },
    ]);
    await h.broker.settled();
    expect(counts(h, "jobs")).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    expect(counts(h, "dlq")).toMatchObject({ visible: 1 });
  });

  it("refuses a delay over 12 h or a handle it no longer holds, changing nothing", async () => {
    await sendText(h, "jobs", "kept");
    const first = await receiveOne(h, "jobs");
    const states = await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: first.receiptHandle, failed: true, visibilityTimeoutMs: 12 * 3600_000 + 1 },
      { receiptHandle: "forged", failed: true },
    ]);
    expect(states.map((state) => [state.held, state.reason])).toEqual([
      [false, "INVALID_ARGUMENT"],
      [false, "RECEIPT_HANDLE_INVALID"],
    ]);
    expect(counts(h, "jobs")).toMatchObject({ visible: 0, inFlight: 1, delayed: 0 });
    // Its lease runs out, and the retry policy's first backoff passes.
    h.clock.advance(vt + 1000);
    const second = await receiveOne(h, "jobs");
    const [stale] = await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: first.receiptHandle, failed: true },
    ]);
    expect(stale).toMatchObject({ held: false, reason: "LEASE_SUPERSEDED" });
    expect(counts(h, "jobs")).toMatchObject({ inFlight: 1 });
    await h.broker.delete("jobs", second.receiptHandle);
  });
});
