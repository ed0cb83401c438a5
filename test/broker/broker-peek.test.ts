// PeekMessages' rules on a fake clock: arrival order across pages, cursors
// that survive deletes, each message's state, and the property that matters
// most to an operator browsing a queue: a peek changes nothing.
import { serialize } from "node:v8";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { PeekPage } from "../../src/broker/types.js";
import { Broker } from "../../src/broker/broker.js";
import { BrokerMetrics } from "../../src/metrics/broker-metrics.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  send,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 10_000;

describe("peekMessages", () => {
  let h: BrokerHarness;
  let registry: Registry;
  beforeEach(async () => {
    registry = new Registry();
    const metrics = new BrokerMetrics(registry);
    h = await openBrokerHarness({ events: metrics });
    metrics.observe(h.broker);
    await createQueue(h, "jobs", { visibilityTimeoutMs: vt });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  /** Sends messages "m<from>".."m<from+n-1>", one millisecond apart; returns their ids. */
  async function sendMany(n: number, from = 0): Promise<string[]> {
    const ids: string[] = [];
    for (let i = from; i < from + n; i++) {
      ids.push(await sendText(h, "jobs", `m${i}`));
      h.clock.advance(1);
    }
    return ids;
  }

  /** Every page of a queue, in order. */
  async function allPages(queue: string, pageSize: number): Promise<PeekPage[]> {
    const pages: PeekPage[] = [];
    let token = "";
    do {
      const page = await h.broker.peekMessages(queue, pageSize, token);
      pages.push(page);
      token = page.nextPageToken;
    } while (token !== "");
    return pages;
  }

  const bodies = (page: PeekPage): string[] => page.messages.map((message) => text(message.body));

  it("pages oldest first by arrival, whatever each message's state, with an empty token on the last page", async () => {
    const ids = await sendMany(2);
    ids.push(await sendText(h, "jobs", "m2", { delayMs: 60_000 })); // delayed: later in ready order, not in arrival order
    h.clock.advance(1);
    ids.push(...(await sendMany(2, 3)));
    await receiveOne(h, "jobs"); // m0 in flight
    const pages = await allPages("jobs", 2);
    expect(pages.map(bodies)).toEqual([["m0", "m1"], ["m2", "m3"], ["m4"]]);
    expect(pages.flatMap((page) => page.messages.map((message) => message.messageId))).toEqual(ids);
    expect(pages.map((page) => page.nextPageToken === "")).toEqual([false, false, true]);
  });

  it("ends a listing whose last page is full with that page: no empty page after it", async () => {
    await sendMany(4);
    const pages = await allPages("jobs", 2);
    expect(pages.map(bodies)).toEqual([
      ["m0", "m1"],
      ["m2", "m3"],
    ]);
  });

  it("takes page sizes 1 to 100, 0 meaning 10, and refuses others and foreign tokens on their fields", async () => {
    await sendMany(12);
    expect((await h.broker.peekMessages("jobs", 0)).messages).toHaveLength(10);
    expect((await h.broker.peekMessages("jobs", 1)).messages).toHaveLength(1);
    expect((await h.broker.peekMessages("jobs", 100)).messages).toHaveLength(12);
    await expectFailure(() => h.broker.peekMessages("jobs", 101), "INVALID_ARGUMENT", "page_size");
    await expectFailure(() => h.broker.peekMessages("jobs", -1), "INVALID_ARGUMENT", "page_size");
    const { nextPageToken } = await h.broker.peekMessages("jobs", 1);
    await expectFailure(() => h.broker.peekMessages("jobs", 1, "not-a-token"), "INVALID_ARGUMENT", "page_token");
    await expectFailure(() => h.broker.peekMessages("jobs", 1, `${nextPageToken}A`), "INVALID_ARGUMENT", "page_token");
    const listToken = Buffer.from("after:jobs").toString("base64url"); // a ListQueues token
    await expectFailure(() => h.broker.peekMessages("jobs", 1, listToken), "INVALID_ARGUMENT", "page_token");
    await expectFailure(() => h.broker.peekMessages("nope", 1), "QUEUE_NOT_FOUND");
  });

  it("resumes after the previous page's last message, even when it and earlier ones were deleted meanwhile", async () => {
    await sendMany(6);
    const first = await h.broker.peekMessages("jobs", 2);
    expect(bodies(first)).toEqual(["m0", "m1"]);
    // Delete m0 and m1 (the cursor's own message): an offset would now skip m2 and m3.
    const taken = await h.broker.receive("jobs", { maxMessages: 2 });
    expect(taken.map((delivery) => text(delivery.body))).toEqual(["m0", "m1"]);
    for (const delivery of taken) await h.broker.delete("jobs", delivery.receiptHandle);
    const second = await h.broker.peekMessages("jobs", 2, first.nextPageToken);
    expect(bodies(second)).toEqual(["m2", "m3"]);
    // A message deleted after the cursor is simply not there.
    const m4 = (await h.broker.receive("jobs", { maxMessages: 3 })).find((delivery) => text(delivery.body) === "m4");
    await h.broker.delete("jobs", m4!.receiptHandle);
    expect(bodies(await h.broker.peekMessages("jobs", 2, second.nextPageToken))).toEqual(["m5"]);
  });

  it("resumes where the cursor's message would be when it left and came back later (a redrive keeps the id)", async () => {
    await createQueue(h, "dlq");
    await createQueue(h, "work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
    });
    for (const name of ["a", "b", "c"]) {
      await sendText(h, "work", name);
      h.clock.advance(1);
    }
    const first = await h.broker.peekMessages("work", 1);
    expect(bodies(first)).toEqual(["a"]);
    // "a" goes to the dead-letter queue and back: the same id, now the newest arrival.
    await receiveOne(h, "work");
    h.clock.advance(vt);
    await h.broker.runMaintenance();
    expect(await h.broker.redriveMessages("dlq", "", 0, 0)).toBe(1);
    const rest = await h.broker.peekMessages("work", 10, first.nextPageToken);
    expect(bodies(rest)).toEqual(["b", "c", "a"]);
  });

  it("stops a page before 4 MiB of messages, yet always returns one", async () => {
    await createQueue(h, "big", { maxMessageBytes: 1024 * 1024 });
    for (let i = 0; i < 5; i++) await send(h.broker, "big", { body: new Uint8Array(1024 * 1024).fill(i) });
    const pages = await allPages("big", 10);
    // 4 MiB less 64 KiB holds three 1 MiB messages with their overhead, not four.
    expect(pages.map((page) => page.messages.length)).toEqual([3, 2]);
    expect(pages.flatMap((page) => page.messages.map((message) => message.body[0]))).toEqual([0, 1, 2, 3, 4]);
  });

  it("reports each message's state: visible, in flight with its lease deadline, delayed with its visible time", async () => {
    const start = h.clock.now();
    await sendText(h, "jobs", "leased");
    await sendText(h, "jobs", "visible");
    await sendText(h, "jobs", "delayed", { delayMs: 5_000 });
    h.clock.advance(100);
    const leased = await receiveOne(h, "jobs");
    expect(text(leased.body)).toBe("leased");
    const { messages } = await h.broker.peekMessages("jobs");
    expect(messages.map((message) => text(message.body))).toEqual(["leased", "visible", "delayed"]);
    const byBody = Object.fromEntries(messages.map((message) => [text(message.body), message]));
    expect(byBody["visible"]).toMatchObject({ state: "VISIBLE", receiveCount: 0, firstReceiveTime: 0 });
    expect(byBody["visible"]).not.toHaveProperty("leaseDeadline");
    expect(byBody["visible"]).not.toHaveProperty("visibleTime");
    expect(byBody["leased"]).toMatchObject({
      state: "IN_FLIGHT",
      leaseDeadline: start + 100 + vt,
      receiveCount: 1,
      firstReceiveTime: start + 100,
      sendTime: start,
    });
    expect(byBody["leased"]).not.toHaveProperty("visibleTime");
    expect(byBody["delayed"]).toMatchObject({
      state: "DELAYED",
      visibleTime: start + 5_000,
      receiveCount: 0,
      firstReceiveTime: 0,
    });
    expect(byBody["delayed"]).not.toHaveProperty("leaseDeadline");
    await h.broker.changeVisibility("jobs", leased.receiptHandle, 0);
    const released = (await h.broker.peekMessages("jobs")).messages.find((message) => text(message.body) === "leased");
    expect(released).toMatchObject({ state: "VISIBLE", receiveCount: 1 });
    expect(released).not.toHaveProperty("leaseDeadline");
  });

  it("shows a lease past its deadline as visible even before maintenance has run", async () => {
    await sendText(h, "jobs", "m");
    await receiveOne(h, "jobs");
    // Advancing the fake clock would run the maintenance timer too; a peek
    // decides by the clock alone, so move only the time it reads.
    const now = vi.spyOn(h.clock, "now").mockReturnValue(h.clock.now() + vt - 1);
    expect((await h.broker.peekMessages("jobs")).messages[0]).toMatchObject({ state: "IN_FLIGHT" });
    now.mockReturnValue(h.clock.now() + 1);
    expect((await h.broker.peekMessages("jobs")).messages[0]).toMatchObject({ state: "VISIBLE", receiveCount: 1 });
    now.mockRestore();
  });

  it("shows a message hidden by a failed delivery's backoff as delayed until it is receivable", async () => {
    const stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
    await sendText(h, "jobs", "m");
    const delivery = await receiveOne(h, "jobs");
    const now = h.clock.now();
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: delivery.receiptHandle, failed: true, visibilityTimeoutMs: 250 },
    ]);
    expect((await h.broker.peekMessages("jobs")).messages[0]).toMatchObject({
      state: "DELAYED",
      visibleTime: now + 250,
    });
    await h.broker.streams.close(stream, false);
  });

  it("gives the size of a stored checkpoint, never its bytes", async () => {
    const stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
    await sendText(h, "jobs", "with");
    await sendText(h, "jobs", "without");
    const delivery = await receiveOne(h, "jobs");
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: delivery.receiptHandle, checkpoint: Buffer.from("step 12345") },
    ]);
    const { messages } = await h.broker.peekMessages("jobs");
    expect(messages.map((message) => [text(message.body), message.checkpointSize])).toEqual([
      ["with", 10],
      ["without", 0],
    ]);
    expect(messages[0]).not.toHaveProperty("checkpoint");
    await h.broker.streams.close(stream, false);
  });

  it("shows a dead-lettered message's source queue and reason", async () => {
    await createQueue(h, "dlq");
    await createQueue(h, "work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
    });
    const id = await sendText(h, "work", "poison", { attributes: { kind: "bad" } });
    const { firstReceiveTime } = await receiveOne(h, "work");
    h.clock.advance(vt);
    await h.broker.runMaintenance();
    await h.broker.settled();
    h.clock.advance(3);
    const { messages } = await h.broker.peekMessages("dlq");
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      messageId: id,
      attributes: { kind: "bad" },
      receiveCount: 1,
      firstReceiveTime,
      deadLetteredTime: firstReceiveTime + vt,
      state: "VISIBLE",
      deadLetter: { sourceQueue: "work", reason: "MAX_RECEIVE_COUNT_EXCEEDED" },
    });
    expect((await h.broker.peekMessages("work")).messages).toEqual([]);
  });

  it("changes nothing: no write, no count, no lease, no metric; the next Receive gets what it would have got", async () => {
    const stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
    const ids = await sendMany(3);
    await sendText(h, "jobs", "delayed", { delayMs: 5_000 });
    const leased = await receiveOne(h, "jobs");
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: leased.receiptHandle, checkpoint: Buffer.from("cp") },
    ]);
    await h.broker.settled();

    // Serialized, so that the comparison covers every byte and every key's order.
    const stored = serialize(h.store.contents);
    const metricsBefore = await registry.metrics();
    const countsBefore = counts(h, "jobs");
    const commit = vi.spyOn(h.store, "commit");
    for (let round = 0; round < 3; round++) {
      await allPages("jobs", 1);
      await h.broker.peekMessages("jobs", 100);
    }
    expect(commit).not.toHaveBeenCalled();
    expect(serialize(h.store.contents).equals(stored)).toBe(true);
    expect(await registry.metrics()).toBe(metricsBefore);
    expect(counts(h, "jobs")).toEqual(countsBefore);
    // The lease still holds: its handle still extends it, and m1 is what a Receive takes next, on its first delivery.
    await h.broker.changeVisibility("jobs", leased.receiptHandle, vt);
    const next = await receiveOne(h, "jobs");
    expect([next.messageId, next.receiveCount, next.firstReceiveTime]).toEqual([ids[1], 1, h.clock.now()]);
    expect(next.checkpoint).toBeUndefined();
    await h.broker.streams.close(stream, false);
  });
});

describe("peekMessages while its page is read", () => {
  /** A broker whose store holds each read until `release`, so that a test can change the queue mid-peek. */
  async function brokerWithHeldReads() {
    const inner = new MemoryStore();
    let held: Promise<void> | undefined;
    let release = (): void => undefined;
    const store = Object.create(inner) as MemoryStore;
    store.readMessages = async (dataId, messages) => {
      if (held !== undefined) await held;
      return inner.readMessages(dataId, messages);
    };
    const broker = await Broker.open({ store });
    await broker.createQueue("q");
    for (let i = 0; i < 3; i++) await send(broker, "q", { body: Buffer.from(`m${i}`) });
    // Later reads (the purge's or deletion's own) pass; the held one waits for release.
    const holdNextRead = (): void => {
      const gate = new Promise<void>((resolve) => (release = resolve));
      held = gate;
      void Promise.resolve().then(() => {
        if (held === gate) held = undefined;
      });
    };
    return { broker, holdNextRead, release: () => release() };
  }

  it("leaves out messages purged meanwhile, and its token still goes on", async () => {
    const { broker, holdNextRead, release } = await brokerWithHeldReads();
    holdNextRead();
    const pending = broker.peekMessages("q", 2);
    await broker.purgeQueue("q");
    release();
    const page = await pending;
    expect(page.messages).toEqual([]);
    expect(page.nextPageToken).not.toBe("");
    expect((await broker.peekMessages("q", 2, page.nextPageToken)).messages).toEqual([]);
    broker.close();
  });

  it("fails with QUEUE_NOT_FOUND when the queue is deleted meanwhile", async () => {
    const { broker, holdNextRead, release } = await brokerWithHeldReads();
    holdNextRead();
    const pending = broker.peekMessages("q", 2);
    await broker.deleteQueue("q");
    release();
    await expect(pending).rejects.toMatchObject({ reason: "QUEUE_NOT_FOUND" });
    broker.close();
  });
});
