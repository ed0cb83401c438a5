import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 1000;
// A well-formed message id that no queue holds.
const unknownId = "019b76da-a80b-772c-b498-ce91a4eb059e";

describe("per-message admin actions (DiscardMessage, MoveMessage)", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "dlq");
    await createQueue(h, "work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
    });
    await createQueue(h, "other");
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  /** Sends a message to "work", receives it once and lets its lease run out: it is dead-lettered. */
  async function deadLettered(message: string): Promise<{ id: string; firstReceiveTime: number }> {
    const id = await sendText(h, "work", message, { attributes: { kind: "bad" } });
    const { firstReceiveTime } = await receiveOne(h, "work");
    h.clock.advance(vt);
    await h.broker.runMaintenance();
    await h.broker.settled();
    expect(counts(h, "dlq").visible).toBe(1);
    return { id, firstReceiveTime };
  }

  describe("discardMessage", () => {
    it("deletes one visible message by its id, leaving the others", async () => {
      const keep = await sendText(h, "other", "keep");
      const drop = await sendText(h, "other", "drop");
      await h.broker.discardMessage("other", drop);
      expect((await h.broker.peekMessages("other")).messages.map((m) => m.messageId)).toEqual([keep]);
      // Durable: a restart does not bring it back.
      await h.restart();
      expect((await h.broker.peekMessages("other")).messages.map((m) => m.messageId)).toEqual([keep]);
    });

    it("takes a message in flight: its consumer's Delete then does nothing, its ChangeVisibility finds it gone", async () => {
      const id = await sendText(h, "other", "leased");
      const delivery = await receiveOne(h, "other", { visibilityTimeoutMs: 60_000 });
      await h.broker.discardMessage("other", id.toUpperCase());
      expect(counts(h, "other")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      await h.broker.delete("other", delivery.receiptHandle);
      await expectFailure(() => h.broker.changeVisibility("other", delivery.receiptHandle, 0), "MESSAGE_NOT_FOUND");
    });

    it("frees a FIFO group held by the discarded message's lease", async () => {
      await createQueue(h, "orders.fifo", { fifo: true, contentBasedDeduplication: true });
      const first = await sendText(h, "orders.fifo", "first", { messageGroupId: "g" });
      await sendText(h, "orders.fifo", "second", { messageGroupId: "g" });
      await receiveOne(h, "orders.fifo", { visibilityTimeoutMs: 60_000 });
      expect(await h.broker.receive("orders.fifo")).toEqual([]);
      await h.broker.discardMessage("orders.fifo", first);
      expect(text(await receiveOne(h, "orders.fifo"))).toBe("second");
    });

    it("refuses a malformed id (INVALID_ARGUMENT on message_id) and an unknown one (MESSAGE_NOT_FOUND)", async () => {
      await expectFailure(() => h.broker.discardMessage("other", "not-an-id"), "INVALID_ARGUMENT", "message_id");
      await expectFailure(() => h.broker.discardMessage("other", unknownId), "MESSAGE_NOT_FOUND");
      const id = await sendText(h, "other", "m");
      await expectFailure(() => h.broker.discardMessage("dlq", id), "MESSAGE_NOT_FOUND");
      await expectFailure(() => h.broker.discardMessage("nope", id), "QUEUE_NOT_FOUND");
    });
  });

  describe("moveMessage", () => {
    it("moves a dead-lettered message back to its source queue, as a redrive does: history started again", async () => {
      const { id } = await deadLettered("poison");
      h.clock.advance(5);
      expect(await h.broker.moveMessage("dlq", id, "")).toBe("work");
      expect(counts(h, "dlq").visible).toBe(0);
      const [back] = (await h.broker.peekMessages("work")).messages;
      expect(back).toMatchObject({ messageId: id, receiveCount: 0, firstReceiveTime: 0, state: "VISIBLE" });
      expect(back!.deadLetter).toBeUndefined();
      expect(back!.deadLetteredTime).toBeUndefined();
      const delivery = await receiveOne(h, "work");
      expect([text(delivery), delivery.attributes, delivery.receiveCount]).toEqual(["poison", { kind: "bad" }, 1]);
    });

    it("moves a message of any state to a named queue, and survives a restart", async () => {
      const id = await sendText(h, "other", "in flight");
      await receiveOne(h, "other", { visibilityTimeoutMs: 60_000 });
      expect(await h.broker.moveMessage("other", id, "dlq")).toBe("dlq");
      expect(counts(h, "other")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      await h.restart();
      const [moved] = (await h.broker.peekMessages("dlq")).messages;
      expect(moved).toMatchObject({ messageId: id, receiveCount: 0, state: "VISIBLE" });
      expect(moved!.deadLetter).toBeUndefined();
    });

    it("refuses an empty destination for a message that was never dead-lettered", async () => {
      const id = await sendText(h, "other", "m");
      await expectFailure(() => h.broker.moveMessage("other", id, ""), "INVALID_ARGUMENT", "destination_queue");
      expect(counts(h, "other").visible).toBe(1);
    });

    it("refuses the queue itself, a missing destination, and a source queue deleted since", async () => {
      const { id } = await deadLettered("poison");
      await expectFailure(() => h.broker.moveMessage("dlq", id, "dlq"), "INVALID_ARGUMENT", "destination_queue");
      await expectFailure(() => h.broker.moveMessage("dlq", id, "missing"), "QUEUE_NOT_FOUND");
      await h.broker.deleteQueue("work");
      await expectFailure(() => h.broker.moveMessage("dlq", id, ""), "QUEUE_NOT_FOUND");
      expect(counts(h, "dlq").visible).toBe(1);
    });

    it("refuses a FIFO destination for a standard message and a standard one for a FIFO message", async () => {
      await createQueue(h, "orders.fifo", { fifo: true, contentBasedDeduplication: true });
      await createQueue(h, "more.fifo", { fifo: true, contentBasedDeduplication: true });
      const plain = await sendText(h, "other", "m");
      await expectFailure(
        () => h.broker.moveMessage("other", plain, "orders.fifo"),
        "INVALID_ARGUMENT",
        "destination_queue",
      );
      const ordered = await sendText(h, "orders.fifo", "o", { messageGroupId: "g" });
      await expectFailure(
        () => h.broker.moveMessage("orders.fifo", ordered, "other"),
        "INVALID_ARGUMENT",
        "destination_queue",
      );
      // FIFO to FIFO moves, taking a sequence number there.
      expect(await h.broker.moveMessage("orders.fifo", ordered, "more.fifo")).toBe("more.fifo");
      expect((await receiveOne(h, "more.fifo")).fifo).toMatchObject({ messageGroupId: "g" });
    });

    it("refuses a malformed or unknown id", async () => {
      await expectFailure(() => h.broker.moveMessage("other", "x", "dlq"), "INVALID_ARGUMENT", "message_id");
      await expectFailure(() => h.broker.moveMessage("other", unknownId, "dlq"), "MESSAGE_NOT_FOUND");
    });
  });
});
