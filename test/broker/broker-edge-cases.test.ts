import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { receiveResponseBudgetBytes } from "../../src/broker/request-limits.js";
import { maxCheckpointBytes } from "../../src/protocol/limits.js";
import {
  counts,
  createQueue,
  openBrokerHarness,
  receiveOne,
  send,
  sendText,
  type BrokerHarness,
} from "./broker-harness.js";

// Cases found in review, each once a real bug.
describe("edge cases", () => {
  let h: BrokerHarness;
  let expired: string[];
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "q", { visibilityTimeoutMs: 1000, maxLeaseDurationMs: 5000, maxMessageBytes: 1024 * 1024 });
    expired = [];
  });
  afterEach(async () => {
    await h.dispose();
  });

  const openStream = () =>
    h.broker.streams.open({ leasesExpired: (handles) => expired.push(...handles), brokerClosing: () => undefined });

  it("a waiting receive gets the checkpoint saved by the release that freed the message", async () => {
    await sendText(h, "q", "job");
    const first = await receiveOne(h, "q");
    const poll = h.broker.receive("q", { waitTimeMs: 5000 });
    const stream = openStream();
    await h.broker.streams.renew(stream, "q", [
      { receiptHandle: first.receiptHandle, visibilityTimeoutMs: 0, checkpoint: Buffer.from("chunk 7") },
    ]);
    const [again] = await poll;
    expect(Buffer.from(again!.checkpoint!).toString()).toBe("chunk 7");
  });

  it("a renewal refused for its checkpoint still leaves the lease tracked, so its expiry is told", async () => {
    await sendText(h, "q", "job");
    const message = await receiveOne(h, "q");
    const stream = openStream();
    await h.broker.streams.renew(stream, "q", [{ receiptHandle: message.receiptHandle }]);
    const [refused] = await h.broker.streams.renew(stream, "q", [
      { receiptHandle: message.receiptHandle, checkpoint: new Uint8Array(maxCheckpointBytes + 1) },
    ]);
    expect(refused).toMatchObject({ held: false, reason: "INVALID_ARGUMENT" });
    h.clock.advance(1000);
    expect(expired).toEqual([message.receiptHandle]);
  });

  it("a release is allowed after max_lease_duration has passed", async () => {
    await sendText(h, "q", "job");
    const message = await receiveOne(h, "q");
    h.clock.advance(6000);
    await h.broker.changeVisibility("q", message.receiptHandle, 0);
    expect((await receiveOne(h, "q")).receiveCount).toBe(2);
  });

  it("counts checkpoints in the response size budget", async () => {
    const stream = openStream();
    for (let i = 0; i < 60; i++) await send(h.broker, "q", { body: new Uint8Array(40_000) });
    const leased = await h.broker.receive("q", { maxMessages: 60 });
    await h.broker.streams.renew(
      stream,
      "q",
      leased.map((message) => ({
        receiptHandle: message.receiptHandle,
        visibilityTimeoutMs: 0,
        checkpoint: new Uint8Array(maxCheckpointBytes),
      })),
    );
    const deliveries = await h.broker.receive("q", { maxMessages: 60 });
    const bytes = deliveries.reduce((sum, d) => sum + d.body.byteLength + (d.checkpoint?.byteLength ?? 0), 0);
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.length).toBeLessThan(60);
    expect(bytes).toBeLessThanOrEqual(receiveResponseBudgetBytes);
  });

  it("keeps an attribute named __proto__", async () => {
    const attributes = Object.fromEntries([
      ["__proto__", "x"],
      ["k", "v"],
    ]) as Record<string, string>;
    await send(h.broker, "q", { body: new Uint8Array(1), attributes });
    const message = await receiveOne(h, "q");
    expect(Object.entries(message.attributes)).toEqual([
      ["__proto__", "x"],
      ["k", "v"],
    ]);
  });

  it("loads one message from two index entries a failed write left, keeping the latest delivery", async () => {
    await sendText(h, "q", "job");
    const message = await receiveOne(h, "q");
    const [queue] = (await h.store.load()).queues;
    const [entry] = queue!.schedule.entries();
    // An older entry of the same message, as a lost delete of the old key leaves it.
    await h.store.commit([
      {
        kind: "reschedule",
        dataId: queue!.record.dataId,
        fromReadyAt: 5,
        entry: { ...entry!, readyAt: 5, epoch: 0, leased: false },
      },
    ]);
    await h.restart();
    expect(counts(h, "q")).toMatchObject({ visible: 0, inFlight: 1 });
    await h.broker.delete("q", message.receiptHandle);
    expect(counts(h, "q")).toMatchObject({ visible: 0, inFlight: 0 });
  });
});
