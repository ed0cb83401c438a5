import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LeaseStream } from "../../src/broker/lease-tracking.js";
import {
  createQueue,
  counts,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendText,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 1000;

describe("lease streams (Heartbeat rules)", () => {
  let h: BrokerHarness;
  let expired: string[][];
  let closing: number;
  let stream: LeaseStream;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "jobs", { visibilityTimeoutMs: vt, maxLeaseDurationMs: 60_000 });
    expired = [];
    closing = 0;
    stream = h.broker.streams.open({
      leasesExpired: (handles) => expired.push(handles),
      brokerClosing: () => closing++,
    });
  });
  afterEach(async () => {
    await h.dispose();
  });

  async function leased(text = "work") {
    await sendText(h, "jobs", text);
    return receiveOne(h, "jobs");
  }

  it("renews in order in one durable write, each like ChangeVisibility", async () => {
    const a = await leased("a");
    const b = await leased("b");
    const batchesBefore = h.store.commitStats.batches;
    const states = await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: a.receiptHandle, visibilityTimeoutMs: 5000 },
      { receiptHandle: b.receiptHandle },
    ]);
    expect(h.store.commitStats.batches).toBe(batchesBefore + 1);
    expect(states).toEqual([
      { receiptHandle: a.receiptHandle, held: true, leaseDeadline: h.clock.now() + 5000 },
      { receiptHandle: b.receiptHandle, held: true, leaseDeadline: h.clock.now() + vt },
    ]);
  });

  it("reports each failed renewal with its reason and leaves the rest held", async () => {
    const first = await leased();
    h.clock.advance(vt);
    const second = await receiveOne(h, "jobs");
    const gone = await leased("gone");
    await h.broker.delete("jobs", gone.receiptHandle);
    h.clock.advance(59_500);
    const states = await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: first.receiptHandle },
      { receiptHandle: gone.receiptHandle },
      { receiptHandle: "forged" },
      { receiptHandle: second.receiptHandle, visibilityTimeoutMs: 1000 },
      { receiptHandle: second.receiptHandle, checkpoint: new Uint8Array(64 * 1024 + 1) },
      { receiptHandle: second.receiptHandle, visibilityTimeoutMs: 100 },
    ]);
    expect(states.map((state) => [state.held, state.reason])).toEqual([
      [false, "LEASE_SUPERSEDED"],
      [false, "MESSAGE_NOT_FOUND"],
      [false, "RECEIPT_HANDLE_INVALID"],
      [false, "LEASE_LIMIT_EXCEEDED"],
      [false, "INVALID_ARGUMENT"],
      [true, undefined],
    ]);
  });

  it("ends the stream for an unknown queue or too many renewals", async () => {
    await expectFailure(() => h.broker.streams.renew(stream, "nope", []), "QUEUE_NOT_FOUND");
    const renewals = Array.from({ length: 1001 }, () => ({ receiptHandle: "x" }));
    await expectFailure(() => h.broker.streams.renew(stream, "jobs", renewals), "INVALID_ARGUMENT", "leases");
  });

  it("tells the stream, once, when a tracked lease expires unrenewed", async () => {
    const message = await leased();
    await h.broker.streams.renew(stream, "jobs", [{ receiptHandle: message.receiptHandle }]);
    h.clock.advance(vt - 1);
    expect(expired).toEqual([]);
    h.clock.advance(1);
    expect(expired).toEqual([[message.receiptHandle]]);
    h.clock.advance(10 * vt);
    expect(expired).toHaveLength(1);
    expect(stream.tracked.size).toBe(0);
  });

  it("stops tracking a lease that is deleted, released or superseded", async () => {
    const deleted = await leased("deleted");
    const released = await leased("released");
    const superseded = await leased("superseded");
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: deleted.receiptHandle },
      { receiptHandle: released.receiptHandle },
      { receiptHandle: superseded.receiptHandle },
    ]);
    await h.broker.delete("jobs", deleted.receiptHandle);
    await h.broker.changeVisibility("jobs", released.receiptHandle, 0);
    const states = await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: superseded.receiptHandle, visibilityTimeoutMs: 0 },
    ]);
    expect(states[0]).toMatchObject({ held: false, reason: "RELEASED" });
    expect(stream.tracked.size).toBe(0);
    h.clock.advance(10 * vt);
    expect(expired).toEqual([]);
  });

  it("a broken release_on_disconnect stream makes its held leases visible at once", async () => {
    const message = await leased();
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: message.receiptHandle, visibilityTimeoutMs: 30_000 },
    ]);
    const poll = h.broker.receive("jobs", { waitTimeMs: 5000 });
    await h.broker.streams.close(stream, true);
    const [again] = await poll;
    expect(again!.messageId).toBe(message.messageId);
    expect(again!.receiveCount).toBe(2);
    expect(h.broker.streams.count).toBe(0);
  });

  it("a stream that ends without release leaves its leases running", async () => {
    const message = await leased();
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: message.receiptHandle, visibilityTimeoutMs: 30_000 },
    ]);
    await h.broker.streams.close(stream, false);
    expect(counts(h, "jobs")).toMatchObject({ inFlight: 1, visible: 0 });
  });

  it("never releases another consumer's later delivery of a message it once held", async () => {
    const message = await leased();
    await h.broker.streams.renew(stream, "jobs", [{ receiptHandle: message.receiptHandle }]);
    h.clock.advance(vt);
    const taken = await receiveOne(h, "jobs", { visibilityTimeoutMs: 30_000 });
    expect(taken.receiveCount).toBe(2);
    await h.broker.streams.close(stream, true);
    expect(counts(h, "jobs")).toMatchObject({ inFlight: 1, visible: 0 });
  });

  it("stores checkpoints: kept by renewals without one, replaced by later ones, delivered on redelivery", async () => {
    const message = await leased();
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: message.receiptHandle, checkpoint: Buffer.from("one") },
    ]);
    await h.broker.streams.renew(stream, "jobs", [{ receiptHandle: message.receiptHandle }]);
    h.clock.advance(vt);
    const second = await receiveOne(h, "jobs");
    expect(Buffer.from(second.checkpoint!).toString()).toBe("one");
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: second.receiptHandle, checkpoint: Buffer.from("two") },
    ]);
    await h.restart();
    h.clock.advance(vt);
    const third = await receiveOne(h, "jobs");
    expect(Buffer.from(third.checkpoint!).toString()).toBe("two");
  });

  it("asks open streams to end when the broker closes", async () => {
    expect(h.broker.streams.count).toBe(1);
    h.broker.close();
    expect(closing).toBe(1);
  });
});
