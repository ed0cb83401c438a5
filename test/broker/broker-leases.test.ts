import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Delivery } from "../../src/broker/types.js";
import { Code } from "../../src/protocol/error-reasons.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendAndReceive,
  sendBatch,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 10_000;

/** The handle with one character in its middle changed. */
function flipChar(handle: string): string {
  const index = Math.floor(handle.length / 2);
  const replacement = handle[index] === "A" ? "B" : "A";
  return handle.slice(0, index) + replacement + handle.slice(index + 1);
}

describe("leases", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "q", { visibilityTimeoutMs: vt });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  /** Lets a delivery's lease run out and receives the message again. */
  async function redeliver(first: Delivery): Promise<Delivery> {
    h.clock.advance(first.leaseDeadline - h.clock.now());
    const again = await receiveOne(h, "q");
    expect(again.messageId).toBe(first.messageId);
    return again;
  }

  describe("ordering", () => {
    it("delivers messages oldest ready first", async () => {
      for (const name of ["a", "b", "c"]) {
        await sendText(h, "q", name);
        h.clock.advance(1);
      }
      const received = [];
      for (let i = 0; i < 3; i++) received.push(text(await receiveOne(h, "q")));
      expect(received).toEqual(["a", "b", "c"]);
    });

    it("orders by ready time, not send time: a delayed message waits behind later sends", async () => {
      await sendText(h, "q", "delayed", { delayMs: 5000 });
      h.clock.advance(1000);
      await sendText(h, "q", "plain");
      h.clock.advance(10_000);
      const deliveries = await h.broker.receive("q", { maxMessages: 10 });
      expect(deliveries.map(text)).toEqual(["plain", "delayed"]);
    });

    it("puts a redelivered message behind messages that became ready before its lease ran out", async () => {
      await sendText(h, "q", "leased");
      await receiveOne(h, "q");
      h.clock.advance(1000);
      await sendText(h, "q", "later");
      h.clock.advance(vt);
      const deliveries = await h.broker.receive("q", { maxMessages: 10 });
      expect(deliveries.map(text)).toEqual(["later", "leased"]);
    });

    it("delivers the messages of one SendBatch, all ready at once, in entry order, each once", async () => {
      const ids = await sendBatch(
        h.broker,
        "q",
        ["a", "b", "c", "d"].map((name) => ({ body: Buffer.from(name) })),
      );
      const deliveries = await h.broker.receive("q", { maxMessages: 10 });
      expect(deliveries.map((delivery) => delivery.messageId)).toEqual(ids);
      expect(new Set(deliveries.map((delivery) => delivery.receiptHandle)).size).toBe(4);
    });
  });

  describe("receive", () => {
    it("leases a message until now + the queue's visibility timeout and reports its delivery", async () => {
      const sentAt = h.clock.now();
      const id = await sendText(h, "q", "hello", { attributes: { k: "v" } });
      h.clock.advance(700);
      const delivery = await receiveOne(h, "q");
      expect(delivery).toMatchObject({
        messageId: id,
        attributes: { k: "v" },
        receiveCount: 1,
        sendTime: sentAt,
        firstReceiveTime: sentAt + 700,
        leaseDeadline: sentAt + 700 + vt,
      });
      expect(text(delivery)).toBe("hello");
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });

    it("uses the receive's own visibility timeout over the queue's", async () => {
      await sendText(h, "q", "m");
      expect((await receiveOne(h, "q", { visibilityTimeoutMs: 2500 })).leaseDeadline).toBe(h.clock.now() + 2500);
    });

    it("hides the message until the deadline, then redelivers it with receive count 2 and a new handle", async () => {
      const first = await sendAndReceive(h, "q");
      h.clock.advance(vt - 1);
      expect(await h.broker.receive("q")).toEqual([]);
      h.clock.advance(1);
      const second = await receiveOne(h, "q");
      expect(second.messageId).toBe(first.messageId);
      expect(second.receiveCount).toBe(2);
      expect(second.receiptHandle).not.toBe(first.receiptHandle);
      expect(second.firstReceiveTime).toBe(first.firstReceiveTime);
      expect(second.sendTime).toBe(first.sendTime);
      expect(second.leaseDeadline).toBe(first.leaseDeadline + vt);
    });

    it("with visibility timeout 0 delivers without hiding", async () => {
      await sendText(h, "q", "m");
      const first = await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
      expect(first.leaseDeadline).toBe(h.clock.now());
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      const second = await receiveOne(h, "q", { visibilityTimeoutMs: 0, maxMessages: 10 });
      expect(second.messageId).toBe(first.messageId);
      expect(second.receiveCount).toBe(2);
    });

    it("rejects a visibility timeout above max_lease_duration as INVALID_ARGUMENT on visibility_timeout", async () => {
      await createQueue(h, "short", { maxLeaseDurationMs: 60_000, visibilityTimeoutMs: 1000 });
      await sendText(h, "short", "m");
      await expectFailure(
        () => h.broker.receive("short", { visibilityTimeoutMs: 60_001 }),
        "INVALID_ARGUMENT",
        "visibility_timeout",
      );
      expect(counts(h, "short")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    });
  });

  describe("delete", () => {
    it("deletes the message of a current lease for good", async () => {
      const delivery = await sendAndReceive(h, "q");
      await h.broker.delete("q", delivery.receiptHandle);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      h.clock.advance(2 * vt);
      expect(await h.broker.receive("q")).toEqual([]);
    });

    it("succeeds again for a message already deleted", async () => {
      const delivery = await sendAndReceive(h, "q");
      await h.broker.delete("q", delivery.receiptHandle);
      await expect(h.broker.delete("q", delivery.receiptHandle)).resolves.toBe("already-deleted");
    });

    it("still deletes with a handle whose lease expired if nobody received the message since", async () => {
      const delivery = await sendAndReceive(h, "q");
      h.clock.advance(vt + 5000);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      await h.broker.delete("q", delivery.receiptHandle);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      expect(await h.broker.receive("q")).toEqual([]);
    });

    it("works with a handle from a visibility-0 receive", async () => {
      await sendText(h, "q", "m");
      const delivery = await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
      await h.broker.delete("q", delivery.receiptHandle);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe("fencing", () => {
    it("refuses Delete with a superseded handle as LEASE_SUPERSEDED, leaving the new lease alone", async () => {
      const first = await sendAndReceive(h, "q");
      const second = await redeliver(first);
      const error = await expectFailure(() => h.broker.delete("q", first.receiptHandle), "LEASE_SUPERSEDED");
      expect(error.code).toBe(Code.FAILED_PRECONDITION);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
      await h.broker.delete("q", second.receiptHandle);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("refuses ChangeVisibility with a superseded handle as LEASE_SUPERSEDED, leaving the deadline alone", async () => {
      const first = await sendAndReceive(h, "q");
      const second = await redeliver(first);
      await expectFailure(() => h.broker.changeVisibility("q", first.receiptHandle, 0), "LEASE_SUPERSEDED");
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
      h.clock.advance(second.leaseDeadline - h.clock.now() - 1);
      expect(await h.broker.receive("q")).toEqual([]);
      h.clock.advance(1);
      expect((await receiveOne(h, "q")).receiveCount).toBe(3);
    });

    it("refuses a handle superseded by a visibility-0 receive", async () => {
      const first = await sendAndReceive(h, "q");
      await h.broker.changeVisibility("q", first.receiptHandle, 0);
      await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
      await expectFailure(() => h.broker.delete("q", first.receiptHandle), "LEASE_SUPERSEDED");
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    });

    it("lets a superseded handle delete nothing even after the message is deleted and gone", async () => {
      const first = await sendAndReceive(h, "q");
      const second = await redeliver(first);
      await h.broker.delete("q", second.receiptHandle);
      await expect(h.broker.delete("q", first.receiptHandle)).resolves.toBe("received-again");
      await expectFailure(() => h.broker.changeVisibility("q", first.receiptHandle, 10), "MESSAGE_NOT_FOUND");
    });
  });

  describe("forged and foreign handles", () => {
    /** Expects Delete and ChangeVisibility both to refuse `handle` on queue `queue`, changing nothing. */
    async function expectInvalidHandle(handle: string, queue = "q"): Promise<void> {
      const before = counts(h, queue);
      const error = await expectFailure(
        () => h.broker.delete(queue, handle),
        "RECEIPT_HANDLE_INVALID",
        "receipt_handle",
      );
      expect(error.code).toBe(Code.INVALID_ARGUMENT);
      await expectFailure(
        () => h.broker.changeVisibility(queue, handle, 0),
        "RECEIPT_HANDLE_INVALID",
        "receipt_handle",
      );
      expect(counts(h, queue)).toEqual(before);
    }

    it("refuses a handle with one character changed", async () => {
      const { receiptHandle } = await sendAndReceive(h, "q");
      await expectInvalidHandle(flipChar(receiptHandle));
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });

    it.each(["", "not-a-handle", "A".repeat(60), "!!!!"])("refuses the string %j", async (handle) => {
      await sendAndReceive(h, "q");
      await expectInvalidHandle(handle);
    });

    it("refuses a handle with characters appended", async () => {
      const { receiptHandle } = await sendAndReceive(h, "q");
      await expectInvalidHandle(`${receiptHandle}AA`);
    });

    it("refuses a handle issued by another queue", async () => {
      await createQueue(h, "other");
      await sendText(h, "other", "m");
      const foreign = await receiveOne(h, "other");
      await sendAndReceive(h, "q");
      await expectInvalidHandle(foreign.receiptHandle, "q");
      expect(counts(h, "other")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });

    it("refuses a handle from a deleted queue on a new queue of the same name", async () => {
      const old = await sendAndReceive(h, "q");
      await h.broker.deleteQueue("q");
      await createQueue(h, "q", { visibilityTimeoutMs: vt });
      await sendAndReceive(h, "q");
      await expectInvalidHandle(old.receiptHandle);
    });

    it("refuses a handle from another data directory's broker", async () => {
      const other = await openBrokerHarness();
      try {
        await createQueue(other, "q", { visibilityTimeoutMs: vt });
        await sendText(other, "q", "m");
        const foreign = await receiveOne(other, "q");
        await sendAndReceive(h, "q");
        await expectInvalidHandle(foreign.receiptHandle);
      } finally {
        await other.dispose();
      }
    });
  });

  describe("changeVisibility", () => {
    it("sets the deadline to now + timeout and returns it, keeping the message hidden past the old deadline", async () => {
      const delivery = await sendAndReceive(h, "q");
      h.clock.advance(4000);
      const deadline = await h.broker.changeVisibility("q", delivery.receiptHandle, 20_000);
      expect(deadline).toBe(h.clock.now() + 20_000);
      h.clock.advance(19_999);
      expect(await h.broker.receive("q")).toEqual([]);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
      h.clock.advance(1);
      expect((await receiveOne(h, "q")).receiveCount).toBe(2);
    });

    it("can shorten a lease", async () => {
      const delivery = await sendAndReceive(h, "q");
      await h.broker.changeVisibility("q", delivery.receiptHandle, 100);
      h.clock.advance(100);
      expect((await receiveOne(h, "q")).messageId).toBe(delivery.messageId);
    });

    it("with 0 makes the message visible at once", async () => {
      const delivery = await sendAndReceive(h, "q");
      expect(await h.broker.changeVisibility("q", delivery.receiptHandle, 0)).toBe(h.clock.now());
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      const again = await receiveOne(h, "q");
      expect(again.messageId).toBe(delivery.messageId);
      expect(again.receiveCount).toBe(2);
    });

    it("re-hides a message whose lease expired when nobody received it since", async () => {
      const delivery = await sendAndReceive(h, "q");
      h.clock.advance(vt + 1000);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      expect(await h.broker.changeVisibility("q", delivery.receiptHandle, 5000)).toBe(h.clock.now() + 5000);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
      expect(await h.broker.receive("q")).toEqual([]);
      await h.broker.delete("q", delivery.receiptHandle);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("fails MESSAGE_NOT_FOUND with code NOT_FOUND for a deleted message", async () => {
      const delivery = await sendAndReceive(h, "q");
      await h.broker.delete("q", delivery.receiptHandle);
      const error = await expectFailure(
        () => h.broker.changeVisibility("q", delivery.receiptHandle, 1000),
        "MESSAGE_NOT_FOUND",
      );
      expect(error.code).toBe(Code.NOT_FOUND);
    });

    it("requires a timeout, bounded by max_lease_duration", async () => {
      const delivery = await sendAndReceive(h, "q");
      await expectFailure(
        () => h.broker.changeVisibility("q", delivery.receiptHandle, undefined),
        "INVALID_ARGUMENT",
        "visibility_timeout",
      );
      await expectFailure(
        () => h.broker.changeVisibility("q", delivery.receiptHandle, -1),
        "INVALID_ARGUMENT",
        "visibility_timeout",
      );
      await expectFailure(
        () => h.broker.changeVisibility("q", delivery.receiptHandle, 12 * 3600_000 + 1),
        "INVALID_ARGUMENT",
        "visibility_timeout",
      );
    });
  });

  describe("max_lease_duration", () => {
    const maxLease = 60_000;
    beforeEach(async () => {
      await createQueue(h, "capped", { maxLeaseDurationMs: maxLease, visibilityTimeoutMs: 10_000 });
      await sendText(h, "capped", "m");
    });

    it("lets a lease be extended up to max_lease_duration after its receive, and no further", async () => {
      const delivery = await receiveOne(h, "capped");
      const receivedAt = h.clock.now();
      h.clock.advance(30_000);
      expect(await h.broker.changeVisibility("capped", delivery.receiptHandle, 30_000)).toBe(receivedAt + maxLease);
      h.clock.advance(1);
      const error = await expectFailure(
        () => h.broker.changeVisibility("capped", delivery.receiptHandle, 30_000),
        "LEASE_LIMIT_EXCEEDED",
      );
      expect(error.code).toBe(Code.FAILED_PRECONDITION);
      // The refused change left the deadline where it was.
      h.clock.advance(receivedAt + maxLease - 1 - h.clock.now());
      expect(await h.broker.receive("capped")).toEqual([]);
      h.clock.advance(1);
      expect((await receiveOne(h, "capped")).receiveCount).toBe(2);
    });

    it("counts from the latest receive, not the first", async () => {
      const first = await receiveOne(h, "capped");
      h.clock.advance(first.leaseDeadline - h.clock.now());
      const second = await receiveOne(h, "capped");
      const receivedAt = h.clock.now();
      expect(await h.broker.changeVisibility("capped", second.receiptHandle, maxLease)).toBe(receivedAt + maxLease);
    });

    it("still counts from the receive when the lease expired and is re-hidden", async () => {
      const delivery = await receiveOne(h, "capped");
      h.clock.advance(50_000);
      await expectFailure(
        () => h.broker.changeVisibility("capped", delivery.receiptHandle, 10_001),
        "LEASE_LIMIT_EXCEEDED",
      );
      expect(await h.broker.changeVisibility("capped", delivery.receiptHandle, 10_000)).toBe(h.clock.now() + 10_000);
    });
  });

  describe("batches", () => {
    it("deletes what it can and reports an outcome per handle, in order", async () => {
      const [ok1, superseded, ok2] = [
        await sendAndReceive(h, "q", "a"),
        await sendAndReceive(h, "q", "b"),
        await sendAndReceive(h, "q", "c"),
      ];
      await h.broker.changeVisibility("q", superseded!.receiptHandle, 0);
      await receiveOne(h, "q");
      const forged = flipChar(ok1!.receiptHandle);
      const handles = [ok1!.receiptHandle, forged, superseded!.receiptHandle, ok2!.receiptHandle];

      const outcomes = await h.broker.deleteBatch("q", handles);
      expect(outcomes.map((outcome) => outcome.receiptHandle)).toEqual(handles);
      expect(outcomes.map((outcome) => outcome.error?.reason)).toEqual([
        undefined,
        "RECEIPT_HANDLE_INVALID",
        "LEASE_SUPERSEDED",
        undefined,
      ]);
      expect(outcomes[1]!.error!.violations.map((violation) => violation.field)).toEqual(["receipt_handle"]);
      // Only "b", leased again, is left.
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });

    it("changes visibility of what it can, reporting the new deadlines and errors in order", async () => {
      const live = await sendAndReceive(h, "q", "a");
      const deleted = await sendAndReceive(h, "q", "b");
      await h.broker.delete("q", deleted.receiptHandle);
      h.clock.advance(1000);
      const handles = [deleted.receiptHandle, live.receiptHandle, "junk"];

      const outcomes = await h.broker.changeVisibilityBatch("q", handles, 0);
      expect(outcomes).toEqual([
        { receiptHandle: deleted.receiptHandle, error: expect.objectContaining({ reason: "MESSAGE_NOT_FOUND" }) },
        { receiptHandle: live.receiptHandle, leaseDeadline: h.clock.now() },
        { receiptHandle: "junk", error: expect.objectContaining({ reason: "RECEIPT_HANDLE_INVALID" }) },
      ]);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    });

    it("reports LEASE_LIMIT_EXCEEDED per entry", async () => {
      await createQueue(h, "capped", { maxLeaseDurationMs: 20_000, visibilityTimeoutMs: 1000 });
      await sendText(h, "capped", "young");
      const young = await receiveOne(h, "capped");
      h.clock.advance(10_000);
      await h.broker.changeVisibility("capped", young.receiptHandle, 10_000);
      await sendText(h, "capped", "fresh");
      const fresh = await receiveOne(h, "capped");
      const outcomes = await h.broker.changeVisibilityBatch(
        "capped",
        [young.receiptHandle, fresh.receiptHandle],
        15_000,
      );
      expect(outcomes.map((outcome) => outcome.error?.reason)).toEqual(["LEASE_LIMIT_EXCEEDED", undefined]);
      expect(outcomes[1]!.leaseDeadline).toBe(h.clock.now() + 15_000);
    });

    it.each([0, 101])("rejects %d handles as INVALID_ARGUMENT on receipt_handles", async (count) => {
      const handles = Array.from({ length: count }, () => "x");
      await expectFailure(() => h.broker.deleteBatch("q", handles), "INVALID_ARGUMENT", "receipt_handles");
      await expectFailure(() => h.broker.changeVisibilityBatch("q", handles, 0), "INVALID_ARGUMENT", "receipt_handles");
    });

    it("rejects a whole visibility batch with a bad timeout before touching any lease", async () => {
      const delivery = await sendAndReceive(h, "q");
      await expectFailure(
        () => h.broker.changeVisibilityBatch("q", [delivery.receiptHandle], -5),
        "INVALID_ARGUMENT",
        "visibility_timeout",
      );
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });
  });
});
