import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deduplicationWindowMs } from "../../src/broker/fifo-deduplication.js";
import type { Delivery } from "../../src/broker/types.js";
import {
  body,
  counts,
  createQueue,
  expectFailure,
  flush,
  openBrokerHarness,
  receiveOne,
  send,
  sendBatch,
  text,
  track,
  type BrokerHarness,
} from "./broker-harness.js";

// FIFO queues' rules on the fake clock: order within a group, one lease at a
// time per group, groups independent and served in turn, deduplication
// inside and outside its window and across restarts, and dead-letter moves
// that keep each group's order.

let h: BrokerHarness;
let sent = 0;

beforeEach(async () => {
  h = await openBrokerHarness();
  sent = 0;
});
afterEach(async () => {
  expect(h.backgroundErrors).toEqual([]);
  await h.dispose();
});

/** Sends a text message to a group, with a fresh deduplication id unless one is given. */
function sendTo(queue: string, group: string, message: string, deduplicationId = `d${++sent}`): Promise<string> {
  return send(h.broker, queue, { body: body(message), messageGroupId: group, deduplicationId });
}

function bodies(deliveries: readonly Delivery[]): string[] {
  return deliveries.map((delivery) => text(delivery.body));
}

describe("FIFO queues: configuration", () => {
  it("is fixed at creation and shown with its settings", async () => {
    const info = await h.broker.createQueue("orders.fifo", { fifo: true, contentBasedDeduplication: true });
    expect(info.config.fifo).toEqual({ contentBasedDeduplication: true, deduplicationScope: "queue" });
    await expectFailure(() => h.broker.updateQueue("orders.fifo", {}), "INVALID_ARGUMENT", "config.fifo");
    await createQueue(h, "plain");
    await expectFailure(() => h.broker.updateQueue("plain", { fifo: true }), "INVALID_ARGUMENT", "config.fifo");
    expect(h.broker.getQueue("plain").config.fifo).toBeUndefined();
  });

  it("refuses a .fifo name for a standard queue, and FIFO settings on one", async () => {
    await expectFailure(() => h.broker.createQueue("jobs.fifo"), "INVALID_ARGUMENT", "config.fifo");
    await expectFailure(
      () => h.broker.createQueue("q", { contentBasedDeduplication: true }),
      "INVALID_ARGUMENT",
      "config.content_based_deduplication",
    );
    await expectFailure(
      () => h.broker.createQueue("q", { deduplicationScope: "queue" }),
      "INVALID_ARGUMENT",
      "config.deduplication_scope",
    );
    await expectFailure(() => h.broker.createQueue("a.b.fifo", { fifo: true }), "INVALID_ARGUMENT", "name");
    await expectFailure(
      () => h.broker.createQueue(`${"x".repeat(76)}.fifo`, { fifo: true }),
      "INVALID_ARGUMENT",
      "name",
    );
    await h.broker.createQueue(`${"x".repeat(75)}.fifo`, { fifo: true });
  });

  it("needs a FIFO dead-letter queue for a FIFO queue, and a standard one for a standard queue", async () => {
    await createQueue(h, "plain-dlq");
    await createQueue(h, "dlq.fifo", { fifo: true });
    const redrive = (deadLetterQueue: string) => ({ redrivePolicy: { deadLetterQueue, maxReceiveCount: 2 } });
    await expectFailure(
      () => h.broker.createQueue("f", { fifo: true, ...redrive("plain-dlq") }),
      "INVALID_ARGUMENT",
      "config.redrive_policy.dead_letter_queue",
    );
    await expectFailure(
      () => h.broker.createQueue("s", redrive("dlq.fifo")),
      "INVALID_ARGUMENT",
      "config.redrive_policy.dead_letter_queue",
    );
    await h.broker.createQueue("f", { fifo: true, ...redrive("dlq.fifo") });
    await h.broker.createQueue("s", redrive("plain-dlq"));
  });

  it("refuses a move between a FIFO queue and a standard one", async () => {
    await createQueue(h, "dlq.fifo", { fifo: true });
    await createQueue(h, "plain");
    await expectFailure(
      () => h.broker.redriveMessages("dlq.fifo", "plain", 0, 0),
      "INVALID_ARGUMENT",
      "destination_queue",
    );
    await expectFailure(
      () => h.broker.startMessageMoveTask("plain", "dlq.fifo", 0),
      "INVALID_ARGUMENT",
      "destination_queue",
    );
  });
});

describe("FIFO queues: sends", () => {
  beforeEach(async () => {
    await createQueue(h, "f", { fifo: true });
    await createQueue(h, "plain");
  });

  it("needs a group, a deduplication id (without content-based deduplication) and no per-message delay", async () => {
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), deduplicationId: "1" }),
      "MESSAGE_GROUP_ID_REQUIRED",
      "message_group_id",
    );
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), messageGroupId: "g" }),
      "DEDUPLICATION_ID_REQUIRED",
      "deduplication_id",
    );
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), messageGroupId: "g", deduplicationId: "1", delayMs: 0 }),
      "INVALID_ARGUMENT",
      "delay",
    );
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), messageGroupId: "has space", deduplicationId: "1" }),
      "INVALID_ARGUMENT",
      "message_group_id",
    );
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), messageGroupId: "g", deduplicationId: "é" }),
      "INVALID_ARGUMENT",
      "deduplication_id",
    );
    await expectFailure(
      () => send(h.broker, "f", { body: body("x"), messageGroupId: "g".repeat(129), deduplicationId: "1" }),
      "INVALID_ARGUMENT",
      "message_group_id",
    );
    await expectFailure(
      () =>
        sendBatch(h.broker, "f", [
          { body: body("ok"), messageGroupId: "g", deduplicationId: "1" },
          { body: body("x"), deduplicationId: "2" },
        ]),
      "MESSAGE_GROUP_ID_REQUIRED",
      "entries[1].message_group_id",
    );
    expect(counts(h, "f").visible).toBe(0);
  });

  it("refuses FIFO fields on a standard queue with NOT_A_FIFO_QUEUE", async () => {
    await expectFailure(
      () => send(h.broker, "plain", { body: body("x"), messageGroupId: "g" }),
      "NOT_A_FIFO_QUEUE",
      "message_group_id",
    );
    await expectFailure(
      () => send(h.broker, "plain", { body: body("x"), deduplicationId: "d" }),
      "NOT_A_FIFO_QUEUE",
      "deduplication_id",
    );
    expect(counts(h, "plain").visible).toBe(0);
  });

  it("numbers messages with increasing 20-digit sequence numbers, returned on send and on delivery", async () => {
    const first = await h.broker.sendWithResult("f", { body: body("a"), messageGroupId: "g", deduplicationId: "1" });
    const batch = await h.broker.sendBatchWithResults("f", [
      { body: body("b"), messageGroupId: "g", deduplicationId: "2" },
      { body: body("c"), messageGroupId: "h", deduplicationId: "3" },
    ]);
    const numbers = [first, ...batch].map((result) => result.sequenceNumber);
    for (const number of numbers) expect(number).toMatch(/^\d{20}$/);
    expect([...numbers].sort()).toEqual(numbers);
    expect(new Set(numbers).size).toBe(3);
    const [delivery] = await h.broker.receive("f");
    expect(delivery!.fifo).toEqual({ messageGroupId: "g", sequenceNumber: numbers[0], deduplicationId: "1" });
    const plain = await h.broker.sendWithResult("plain", { body: body("x") });
    expect(plain.sequenceNumber).toBe("");
    expect((await receiveOne(h, "plain")).fifo).toBeUndefined();
  });

  it("keeps sequence numbers increasing across a restart, even once the queue is empty", async () => {
    const before = await h.broker.sendWithResult("f", { body: body("a"), messageGroupId: "g", deduplicationId: "1" });
    const [delivery] = await h.broker.receive("f");
    await h.broker.delete("f", delivery!.receiptHandle);
    await h.restart();
    const after = await h.broker.sendWithResult("f", { body: body("b"), messageGroupId: "g", deduplicationId: "2" });
    expect(after.sequenceNumber > before.sequenceNumber).toBe(true);
  });
});

describe("FIFO queues: delivery order", () => {
  beforeEach(async () => {
    await createQueue(h, "f", { fifo: true, visibilityTimeoutMs: 10_000 });
  });

  it("delivers a group's messages in send order, several in one receive", async () => {
    for (const message of ["1", "2", "3"]) await sendTo("f", "g", message);
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["1", "2", "3"]);
  });

  it("delivers nothing more of a group while one of its messages is in flight", async () => {
    await sendTo("f", "g", "1");
    await sendTo("f", "g", "2");
    const first = await receiveOne(h, "f");
    expect(text(first.body)).toBe("1");
    expect(await h.broker.receive("f", { maxMessages: 10 })).toEqual([]);
    expect(counts(h, "f")).toEqual({ visible: 1, inFlight: 1, delayed: 0 });
    await h.broker.delete("f", first.receiptHandle);
    expect(text((await receiveOne(h, "f")).body)).toBe("2");
  });

  it("keeps order across redeliveries: an expired lease blocks its group until the message comes back first", async () => {
    for (const message of ["1", "2", "3"]) await sendTo("f", "g", message);
    const [one] = await h.broker.receive("f");
    expect(text(one!.body)).toBe("1");
    h.clock.advance(10_000);
    const again = await h.broker.receive("f", { maxMessages: 10 });
    expect(bodies(again)).toEqual(["1", "2", "3"]);
    expect(again[0]!.receiveCount).toBe(2);
  });

  it("keeps a failed message first through its retry backoff: later ones wait", async () => {
    await h.broker.updateQueue("f", {
      fifo: true,
      visibilityTimeoutMs: 10_000,
      retryPolicy: { minBackoffMs: 5000, maxBackoffMs: 5000 },
    });
    await sendTo("f", "g", "1");
    await sendTo("f", "g", "2");
    await receiveOne(h, "f");
    h.clock.advance(10_000);
    expect(await h.broker.receive("f")).toEqual([]); // "1" waits out its backoff; "2" may not pass it
    h.clock.advance(5000);
    expect(text((await receiveOne(h, "f")).body)).toBe("1");
  });

  it("puts a released message back first in its group", async () => {
    await sendTo("f", "g", "1");
    await sendTo("f", "g", "2");
    const first = await receiveOne(h, "f");
    await h.broker.changeVisibility("f", first.receiptHandle, 0);
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["1", "2"]);
  });

  it("waits for every in-flight message of a group, not only the first, before delivering the rest", async () => {
    for (const message of ["1", "2", "3"]) await sendTo("f", "g", message);
    const [one, two] = await h.broker.receive("f", { maxMessages: 2 });
    await h.broker.changeVisibility("f", one!.receiptHandle, 0); // "1" is back, but "2" is still leased
    expect(await h.broker.receive("f", { maxMessages: 10 })).toEqual([]);
    await h.broker.delete("f", two!.receiptHandle);
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["1", "3"]);
  });

  it("delivers groups independently: a blocked group does not hold the others back", async () => {
    await sendTo("f", "a", "a1");
    await sendTo("f", "a", "a2");
    await sendTo("f", "b", "b1");
    const a1 = await receiveOne(h, "f");
    expect(text(a1.body)).toBe("a1");
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["b1"]);
  });

  it("serves groups in turn, so a hot group with a deep backlog does not starve a cold one", async () => {
    for (let i = 0; i < 50; i++) await sendTo("f", "hot", `hot${i}`);
    await sendTo("f", "cold", "cold0");
    // One message a receive: the hot group's first, then the cold group's, though 49 hot ones wait before it.
    const first = await receiveOne(h, "f", { maxMessages: 1 });
    const second = await receiveOne(h, "f", { maxMessages: 1 });
    expect([text(first.body), text(second.body)]).toEqual(["hot0", "cold0"]);
    await h.broker.delete("f", first.receiptHandle);
    await sendTo("f", "cold", "cold1");
    await h.broker.delete("f", second.receiptHandle);
    // Both ready again: hot became ready first, so it goes first, then cold.
    expect(text((await receiveOne(h, "f", { maxMessages: 1 })).body)).toBe("hot1");
    expect(text((await receiveOne(h, "f", { maxMessages: 1 })).body)).toBe("cold1");
  });

  it("fills a receive from the next groups once one group has given all it can", async () => {
    await sendTo("f", "a", "a1");
    await sendTo("f", "a", "a2");
    await sendTo("f", "b", "b1");
    await sendTo("f", "c", "c1");
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["a1", "a2", "b1", "c1"]);
  });

  it("wakes a long poll when a delete unblocks a group", async () => {
    await sendTo("f", "g", "1");
    await sendTo("f", "g", "2");
    const first = await receiveOne(h, "f");
    const waiting = track(h.broker.receive("f", { waitTimeMs: 20_000 }));
    await flush();
    expect(waiting.settled).toBe(false);
    await h.broker.delete("f", first.receiptHandle);
    expect(bodies(await waiting.promise)).toEqual(["2"]);
  });

  it("keeps groups, order and blocking across a restart", async () => {
    for (const message of ["1", "2"]) await sendTo("f", "g", message);
    await sendTo("f", "h", "h1");
    const first = await receiveOne(h, "f");
    await h.restart();
    const [h1] = await h.broker.receive("f", { maxMessages: 10 });
    expect(text(h1!.body)).toBe("h1");
    await h.broker.delete("f", h1!.receiptHandle);
    h.clock.advance(10_000);
    const again = await h.broker.receive("f", { maxMessages: 10 });
    expect(bodies(again)).toEqual(["1", "2"]);
    expect(again[0]!.fifo?.sequenceNumber).toBe(first.fifo?.sequenceNumber);
  });
});

describe("FIFO queues: deduplication", () => {
  it("stores a repeated id once within five minutes, answering with the first send's id and number", async () => {
    await createQueue(h, "f", { fifo: true });
    const first = await h.broker.sendWithResult("f", { body: body("a"), messageGroupId: "g", deduplicationId: "same" });
    h.clock.advance(deduplicationWindowMs - 1);
    const again = await h.broker.sendWithResult("f", {
      body: body("b"),
      messageGroupId: "other",
      deduplicationId: "same",
    });
    expect(again).toEqual(first);
    expect(counts(h, "f").visible).toBe(1);
    h.clock.advance(1);
    const later = await h.broker.sendWithResult("f", { body: body("c"), messageGroupId: "g", deduplicationId: "same" });
    expect(later.messageId).not.toBe(first.messageId);
    expect(counts(h, "f").visible).toBe(2);
  });

  it("remembers an id after its message is deleted, and across a restart", async () => {
    await createQueue(h, "f", { fifo: true });
    const first = await sendTo("f", "g", "a", "order-1");
    const delivery = await receiveOne(h, "f");
    await h.broker.delete("f", delivery.receiptHandle);
    await h.restart();
    expect(await sendTo("f", "g", "a", "order-1")).toBe(first);
    expect(counts(h, "f").visible).toBe(0);
  });

  it("forgets ids when their window ends, in memory and in the store", async () => {
    await createQueue(h, "f", { fifo: true });
    await sendTo("f", "g", "a", "order-1");
    h.clock.advance(deduplicationWindowMs + 1000);
    await h.broker.runMaintenance();
    const stored = [...h.store.contents.spaces.values()].flatMap((space) => [...space.deduplications.values()]);
    expect(stored).toEqual([]);
    await h.restart();
    await sendTo("f", "g", "a", "order-1");
    expect(counts(h, "f").visible).toBe(2);
  });

  it("deduplicates by the body's SHA-256 with content_based_deduplication; an explicit id wins", async () => {
    await createQueue(h, "f", { fifo: true, contentBasedDeduplication: true });
    const first = await h.broker.sendWithResult("f", { body: body("same"), messageGroupId: "g" });
    expect((await h.broker.sendWithResult("f", { body: body("same"), messageGroupId: "g" })).messageId).toBe(
      first.messageId,
    );
    const explicit = await h.broker.sendWithResult("f", {
      body: body("same"),
      messageGroupId: "g",
      deduplicationId: "x",
    });
    expect(explicit.messageId).not.toBe(first.messageId);
    const [delivery] = await h.broker.receive("f");
    expect(delivery!.fifo?.deduplicationId).toBe(createHash("sha256").update("same").digest("hex"));
  });

  it("compares ids per group with the message-group scope", async () => {
    await createQueue(h, "f", { fifo: true, deduplicationScope: "messageGroup" });
    const a = await sendTo("f", "a", "1", "same");
    const b = await sendTo("f", "b", "1", "same");
    expect(b).not.toBe(a);
    expect(await sendTo("f", "a", "2", "same")).toBe(a);
    expect(counts(h, "f").visible).toBe(2);
  });

  it("stores a batch's repeated id once, and answers both entries with it", async () => {
    await createQueue(h, "f", { fifo: true });
    const results = await h.broker.sendBatchWithResults("f", [
      { body: body("a"), messageGroupId: "g", deduplicationId: "1" },
      { body: body("b"), messageGroupId: "g", deduplicationId: "1" },
      { body: body("c"), messageGroupId: "g", deduplicationId: "2" },
    ]);
    expect(results[1]).toEqual(results[0]);
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["a", "c"]);
  });

  it("stores two concurrent sends of one id once", async () => {
    await createQueue(h, "f", { fifo: true });
    const [one, two] = await Promise.all([sendTo("f", "g", "a", "same"), sendTo("f", "g", "b", "same")]);
    expect(two).toBe(one);
    expect(counts(h, "f").visible).toBe(1);
  });

  it("lets a send whose write failed be retried with the same id, and fails its concurrent duplicate too", async () => {
    await createQueue(h, "f", { fifo: true });
    h.writeFault.inject(new Error("disk full"));
    const first = sendTo("f", "g", "a", "same");
    const duplicate = sendTo("f", "g", "a", "same");
    await expect(first).rejects.toThrow();
    await expect(duplicate).rejects.toThrow();
    h.writeFault.inject(undefined);
    await sendTo("f", "g", "a", "same");
    expect(counts(h, "f").visible).toBe(1);
  });

  it("forgets ids on purge", async () => {
    await createQueue(h, "f", { fifo: true });
    const first = await sendTo("f", "g", "a", "same");
    await h.broker.purgeQueue("f");
    await h.restart();
    expect(await sendTo("f", "g", "a", "same")).not.toBe(first);
  });
});

describe("FIFO queues: dead letters", () => {
  beforeEach(async () => {
    await createQueue(h, "dlq.fifo", { fifo: true });
    await createQueue(h, "f", {
      fifo: true,
      visibilityTimeoutMs: 1000,
      redrivePolicy: { deadLetterQueue: "dlq.fifo", maxReceiveCount: 1 },
    });
  });

  it("moves failed messages with their group, in order, and its deduplication id becomes the message id", async () => {
    for (const message of ["1", "2", "3"]) await sendTo("f", "g", message);
    await sendTo("f", "h", "h1");
    for (let round = 0; round < 4; round++) {
      await h.broker.receive("f", { maxMessages: 1 });
      h.clock.advance(1000);
      await h.broker.runMaintenance();
      await h.broker.settled();
    }
    expect(counts(h, "f").visible + counts(h, "f").inFlight).toBe(0);
    const moved = await h.broker.receive("dlq.fifo", { maxMessages: 10 });
    const byGroup = (group: string) => moved.filter((delivery) => delivery.fifo?.messageGroupId === group);
    expect(bodies(byGroup("g"))).toEqual(["1", "2", "3"]);
    expect(bodies(byGroup("h"))).toEqual(["h1"]);
    for (const delivery of moved) expect(delivery.fifo?.deduplicationId).toBe(delivery.messageId);
    const numbers = byGroup("g").map((delivery) => delivery.fifo!.sequenceNumber);
    expect([...numbers].sort()).toEqual(numbers);
  });

  it("redrives back with group and order kept, after the source's own messages of the group", async () => {
    for (const message of ["1", "2"]) await sendTo("f", "g", message);
    for (let round = 0; round < 2; round++) {
      await h.broker.receive("f");
      h.clock.advance(1000);
      await h.broker.runMaintenance();
      await h.broker.settled();
    }
    await sendTo("f", "g", "3");
    expect(await h.broker.redriveMessages("dlq.fifo", "", 0, 0)).toBe(2);
    expect(bodies(await h.broker.receive("f", { maxMessages: 10 }))).toEqual(["3", "1", "2"]);
  });
});
