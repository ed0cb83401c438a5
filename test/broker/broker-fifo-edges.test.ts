import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import type { MessageReading, ScheduleEntry, Store, StoredState, StoreOp } from "../../src/store/store.js";
import { FakeClock } from "../support/fake-clock.js";
import { body, expectFailure, flush, openBrokerHarness, send, text, type BrokerHarness } from "./broker-harness.js";

// FIFO queues at their edges, each found by a review that reproduced it: a
// send refused as BROKER_FULL, a move task meeting a group with a newer
// message, dead-letter moves whose reads finish out of order, and
// deduplication records whose window ended while the broker was down.

const sendTo = (broker: Broker, queue: string, group: string, message: string, deduplicationId = message) =>
  send(broker, queue, { body: body(message), messageGroupId: group, deduplicationId });

describe("FIFO queues at their edges", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  it("moves every message a move task found at its start, past a group that got a newer one", async () => {
    await h.broker.createQueue("dlq.fifo", { fifo: true });
    await h.broker.createQueue("dest.fifo", { fifo: true });
    for (const [group, message] of [
      ["h", "h1"],
      ["g", "g1"],
      ["k", "k1"],
      ["k", "k2"],
      ["m", "m1"],
    ] as const) {
      await sendTo(h.broker, "dlq.fifo", group, message);
    }
    h.clock.advance(10);
    const moved = h.broker.redriveMessages("dlq.fifo", "dest.fifo", 0, 1);
    await flush();
    h.clock.advance(1);
    await sendTo(h.broker, "dlq.fifo", "g", "g2-new"); // after the start: it stays
    for (let step = 0; step < 10; step++) {
      h.clock.advance(1000);
      await flush();
    }
    expect(await moved).toBe(5);
    const left = await h.broker.receive("dlq.fifo", { maxMessages: 10, visibilityTimeoutMs: 0 });
    expect(left.map((delivery) => text(delivery.body))).toEqual(["g2-new"]);
  });

  it("puts a message another broker moved in, numbered by a clock behind this one's, last in its group, also after a restart", async () => {
    await h.broker.createQueue("f.fifo", { fifo: true });
    await sendTo(h.broker, "f.fifo", "g", "here-1");
    await sendTo(h.broker, "f.fifo", "g", "here-2");
    const { dataId } = (await h.store.load()).queues.find((queue) => queue.record.name === "f.fifo")!.record;
    const now = h.clock.now();
    const entry: ScheduleEntry = {
      id: `${"0".repeat(31)}1`,
      readyAt: now,
      leased: false,
      receiveCount: 0,
      epoch: 0,
      sendTime: now,
      enqueuedAt: now,
      firstReceiveAt: 0,
      leaseStart: 0,
      size: 7,
      hasCheckpoint: false,
      group: "g",
      sequence: 1, // the sending broker's clock was far behind
    };
    // As the cluster's inbox does: stored first, then taken in.
    await h.store.commit([
      { kind: "putMessage", dataId, entry, content: { body: body("arrived"), attributes: {}, typedAttributes: {} } },
    ]);
    h.broker.takeArrivals([{ queue: "f.fifo", dataId, entry }]);
    await h.broker.settled();
    const order = async () =>
      (await h.broker.receive("f.fifo", { maxMessages: 10, visibilityTimeoutMs: 0 })).map((d) => text(d.body));
    expect(await order()).toEqual(["here-1", "here-2", "arrived"]);
    await h.restart();
    expect(await order()).toEqual(["here-1", "here-2", "arrived"]);
  });

  it("forgets, in the store too, deduplication records whose window ended while the broker was down", async () => {
    await h.broker.createQueue("q.fifo", { fifo: true });
    await sendTo(h.broker, "q.fifo", "g", "x", "d1");
    await h.restart();
    h.clock.advance(6 * 60_000); // no sweep runs between the two restarts
    await h.restart();
    await h.broker.runMaintenance();
    await h.broker.settled();
    const stored = (await h.store.load()).queues.find((queue) => queue.record.name === "q.fifo")!;
    expect(stored.deduplications ?? []).toEqual([]);
  });
});

it("lets a FIFO send refused as BROKER_FULL be stored by its retry", async () => {
  const broker = await Broker.open({
    store: new MemoryStore(),
    clock: new FakeClock(),
    limits: { maxStoredMessages: 1 },
  });
  try {
    await broker.createQueue("q.fifo", { fifo: true });
    await sendTo(broker, "q.fifo", "g", "first");
    await expectFailure(() => sendTo(broker, "q.fifo", "g", "second"), "BROKER_FULL");
    const [first] = await broker.receive("q.fifo");
    await broker.delete("q.fifo", first!.receiptHandle);
    await sendTo(broker, "q.fifo", "g", "second");
    expect((await broker.receive("q.fifo")).map((delivery) => text(delivery.body))).toEqual(["second"]);
  } finally {
    broker.close();
    await broker.settled();
  }
});

/** A store whose reads of chosen messages wait until `open`, as a slow read on one connection of a pool. */
class SlowReads implements Store {
  readonly slow = new Set<string>();
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly inner: Store) {}
  load(): Promise<StoredState> {
    return this.inner.load();
  }
  commit(ops: readonly StoreOp[], lingerMs?: number): Promise<void> {
    return this.inner.commit(ops, lingerMs);
  }
  async readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    if (messages.some((message) => this.slow.has(message.id)))
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.inner.readMessages(dataId, messages);
  }
  open(): void {
    this.slow.clear();
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  dropData(dataId: number): Promise<void> {
    return this.inner.dropData(dataId);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

it("moves one group's dead letters in group order, however their reads finish", async () => {
  const clock = new FakeClock();
  const store = new SlowReads(new MemoryStore());
  const broker = await Broker.open({ store, clock });
  try {
    await broker.createQueue("dlq.fifo", { fifo: true });
    const redrivePolicy = { deadLetterQueue: "dlq.fifo", maxReceiveCount: 1 };
    await broker.createQueue("f.fifo", { fifo: true, visibilityTimeoutMs: 1000, redrivePolicy });
    const a = await sendTo(broker, "f.fifo", "g", "A");
    await sendTo(broker, "f.fifo", "g", "B");
    await broker.receive("f.fifo", { maxMessages: 1 });
    store.slow.add(a.replace(/-/g, "")); // A's move reads slowly
    clock.advance(1000);
    broker.getQueue("f.fifo"); // A's lease ran out on its last delivery: its move starts
    for (let i = 0; i < 5; i++) await flush();
    const [b] = await broker.receive("f.fifo", { maxMessages: 1 });
    expect(text(b!.body)).toBe("B");
    clock.advance(1000);
    broker.getQueue("f.fifo"); // B's move, with a fast read
    for (let i = 0; i < 5; i++) await flush();
    store.open();
    await broker.settled();
    const moved = await broker.receive("dlq.fifo", { maxMessages: 10 });
    expect(moved.map((delivery) => text(delivery.body))).toEqual(["A", "B"]);
  } finally {
    broker.close();
    await broker.settled();
  }
});
