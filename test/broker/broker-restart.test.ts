import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  sendAndReceive,
  counts,
  createQueue,
  expectFailure,
  flush,
  openBrokerHarness,
  receiveOne,
  sendText,
  text,
  track,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 10_000;

describe("restart", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "q", { visibilityTimeoutMs: vt });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("brings visible, in-flight and delayed messages back where they were", async () => {
    await sendAndReceive(h, "q", "in flight");
    await sendText(h, "q", "visible", { attributes: { k: "v", ключ: "✓" } });
    await sendText(h, "q", "delayed", { delayMs: 5000 });
    await h.restart();
    expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 1, delayed: 1 });
    const deliveries = await h.broker.receive("q", { maxMessages: 10 });
    expect(deliveries.map(text)).toEqual(["visible"]);
    expect(deliveries[0]!.attributes).toEqual({ k: "v", ключ: "✓" });
    expect(deliveries[0]!.receiveCount).toBe(1);
  });

  it("keeps an in-flight message hidden until its original deadline, then redelivers it", async () => {
    const first = await sendAndReceive(h, "q");
    h.clock.advance(4000);
    await h.restart();
    h.clock.advance(first.leaseDeadline - 1 - h.clock.now());
    expect(await h.broker.receive("q")).toEqual([]);
    h.clock.advance(1);
    const again = await receiveOne(h, "q");
    expect(again).toMatchObject({
      messageId: first.messageId,
      receiveCount: 2,
      firstReceiveTime: first.firstReceiveTime,
      sendTime: first.sendTime,
    });
    expect(again.receiptHandle).not.toBe(first.receiptHandle);
  });

  it("lets a handle issued before the restart delete its message, which never comes back", async () => {
    const first = await sendAndReceive(h, "q");
    await h.restart();
    await h.broker.delete("q", first.receiptHandle);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    h.clock.advance(2 * vt);
    expect(await h.broker.receive("q")).toEqual([]);
    await h.restart();
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it("lets a handle issued before the restart extend its lease", async () => {
    const first = await sendAndReceive(h, "q");
    await h.restart();
    expect(await h.broker.changeVisibility("q", first.receiptHandle, 30_000)).toBe(h.clock.now() + 30_000);
    h.clock.advance(vt);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
  });

  it("keeps a lease extension made before the restart", async () => {
    const first = await sendAndReceive(h, "q");
    const deadline = await h.broker.changeVisibility("q", first.receiptHandle, 60_000);
    await h.restart();
    h.clock.advance(deadline - 1 - h.clock.now());
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    h.clock.advance(1);
    expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
  });

  it("still refuses a handle superseded before the restart", async () => {
    const first = await sendAndReceive(h, "q");
    h.clock.advance(vt);
    const second = await receiveOne(h, "q");
    await h.restart();
    await expectFailure(() => h.broker.delete("q", first.receiptHandle), "LEASE_SUPERSEDED");
    await h.broker.delete("q", second.receiptHandle);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it("keeps the receive count of a message received with visibility 0", async () => {
    await sendText(h, "q", "m");
    await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
    await h.restart();
    expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    expect((await receiveOne(h, "q")).receiveCount).toBe(2);
  });

  it("makes a delayed message visible at its original ready time", async () => {
    await sendText(h, "q", "later", { delayMs: 5000 });
    h.clock.advance(2000);
    await h.restart();
    h.clock.advance(2999);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 1 });
    h.clock.advance(1);
    expect(text(await receiveOne(h, "q"))).toBe("later");
  });

  it("re-arms timers so a long poll gets a lease that expires after the restart", async () => {
    const first = await sendAndReceive(h, "q");
    await h.restart();
    const poll = track(h.broker.receive("q", { waitTimeMs: 20_000 }));
    await flush();
    expect(poll.settled).toBe(false);
    h.clock.advance(first.leaseDeadline - h.clock.now());
    const [again] = await poll.promise;
    expect(again!.messageId).toBe(first.messageId);
  });

  it("keeps ready-time order, redelivered messages behind those ready before them", async () => {
    await sendAndReceive(h, "q", "leased");
    h.clock.advance(1);
    await sendText(h, "q", "b");
    h.clock.advance(1);
    await sendText(h, "q", "c", { delayMs: 5000 });
    await h.restart();
    h.clock.advance(vt);
    const deliveries = await h.broker.receive("q", { maxMessages: 10 });
    expect(deliveries.map(text)).toEqual(["b", "c", "leased"]);
  });

  it("keeps queue configurations, creation times, counts and the oldest message age", async () => {
    await createQueue(h, "other", { delayMs: 1000, maxInFlight: 7, retentionMs: 3600_000 });
    await sendText(h, "q", "m");
    h.clock.advance(500);
    const before = h.broker.listQueues();
    await h.restart();
    expect(h.broker.listQueues()).toEqual(before);
    expect(h.broker.getQueue("q").oldestMessageAgeMs).toBe(500);
    expect(h.broker.getQueue("other").config).toMatchObject({ delayMs: 1000, maxInFlight: 7, retentionMs: 3600_000 });
  });

  it("keeps an updated configuration", async () => {
    await h.broker.updateQueue("q", { visibilityTimeoutMs: 2000 });
    await h.restart();
    await sendText(h, "q", "m");
    expect((await receiveOne(h, "q")).leaseDeadline).toBe(h.clock.now() + 2000);
  });

  it("counts retention from the original send across a restart", async () => {
    await createQueue(h, "short", { retentionMs: 60_000 });
    await sendText(h, "short", "m");
    h.clock.advance(30_000);
    await h.restart();
    h.clock.advance(29_999);
    await h.broker.runMaintenance();
    expect(counts(h, "short").visible).toBe(1);
    h.clock.advance(1);
    await h.broker.runMaintenance();
    expect(counts(h, "short").visible).toBe(0);
  });

  it("keeps a purged queue empty", async () => {
    await sendAndReceive(h, "q", "in flight");
    await sendText(h, "q", "visible");
    await sendText(h, "q", "delayed", { delayMs: 5000 });
    await h.broker.purgeQueue("q");
    await sendText(h, "q", "after purge");
    await h.restart();
    h.clock.advance(vt);
    expect((await h.broker.receive("q", { maxMessages: 10 })).map(text)).toEqual(["after purge"]);
  });

  it("keeps a deleted queue gone, and a queue recreated under its name empty", async () => {
    await createQueue(h, "gone");
    await sendText(h, "gone", "m");
    await sendAndReceive(h, "q", "old");
    await h.broker.deleteQueue("gone");
    await h.broker.deleteQueue("q");
    await createQueue(h, "q");
    await h.restart();
    expect(h.broker.listQueues().queues.map((queue) => queue.name)).toEqual(["q"]);
    h.clock.advance(vt);
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it("never reuses a deleted queue's id: its handles stay invalid for a same-name queue created after a restart", async () => {
    const old = await sendAndReceive(h, "q");
    await h.broker.deleteQueue("q");
    await h.restart();
    await createQueue(h, "q", { visibilityTimeoutMs: vt });
    await sendAndReceive(h, "q");
    await expectFailure(() => h.broker.delete("q", old.receiptHandle), "RECEIPT_HANDLE_INVALID", "receipt_handle");
    expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
  });
});
