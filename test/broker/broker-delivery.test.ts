import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutgoingMessage } from "../../src/broker/types.js";
import { Code } from "../../src/protocol/error-reasons.js";
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
  sendText,
  text,
  track,
  type BrokerHarness,
} from "./broker-harness.js";

/** A message of exactly `size` bytes of body. */
function ofSize(size: number, attributes: Record<string, string> = {}): OutgoingMessage {
  return { body: new Uint8Array(size), attributes };
}

describe("delivery", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  describe("delays", () => {
    it("hides a message for its own delay, counting it as delayed", async () => {
      await createQueue(h, "q");
      await sendText(h, "q", "later", { delayMs: 5000 });
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 1 });
      h.clock.advance(4999);
      expect(await h.broker.receive("q")).toEqual([]);
      h.clock.advance(1);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      const delivery = await receiveOne(h, "q");
      expect(text(delivery)).toBe("later");
      expect(delivery.sendTime).toBe(h.clock.now() - 5000);
    });

    it("applies the queue's delay when the message sets none", async () => {
      await createQueue(h, "q", { delayMs: 3000 });
      await sendText(h, "q", "m");
      h.clock.advance(2999);
      expect(await h.broker.receive("q")).toEqual([]);
      h.clock.advance(1);
      expect(text(await receiveOne(h, "q"))).toBe("m");
    });

    it("lets a message's delay of 0 override the queue's delay", async () => {
      await createQueue(h, "q", { delayMs: 3000 });
      await sendText(h, "q", "now", { delayMs: 0 });
      expect(text(await receiveOne(h, "q"))).toBe("now");
    });

    it("lets a message's delay be longer than the queue's", async () => {
      await createQueue(h, "q", { delayMs: 1000 });
      await sendText(h, "q", "m", { delayMs: 8000 });
      h.clock.advance(7999);
      expect(await h.broker.receive("q")).toEqual([]);
      h.clock.advance(1);
      await receiveOne(h, "q");
    });

    it("rejects a delay beyond retention or negative as INVALID_ARGUMENT on delay", async () => {
      await createQueue(h, "q", { retentionMs: 60_000 });
      await expectFailure(() => sendText(h, "q", "m", { delayMs: 60_001 }), "INVALID_ARGUMENT", "delay");
      await expectFailure(() => sendText(h, "q", "m", { delayMs: -1 }), "INVALID_ARGUMENT", "delay");
      await expectFailure(() => sendText(h, "q", "m", { delayMs: 0.5 }), "INVALID_ARGUMENT", "delay");
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe("in-flight limit", () => {
    beforeEach(async () => {
      await createQueue(h, "q", { maxInFlight: 2 });
      await sendBatch(
        h.broker,
        "q",
        ["a", "b", "c"].map((name) => ({ body: body(name) })),
      );
    });

    it("receives only the room left under max_in_flight", async () => {
      await receiveOne(h, "q");
      const deliveries = await h.broker.receive("q", { maxMessages: 10 });
      expect(deliveries.map(text)).toEqual(["b"]);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 2, delayed: 0 });
    });

    it("fails a short poll at max_in_flight with TOO_MANY_IN_FLIGHT (RESOURCE_EXHAUSTED)", async () => {
      await h.broker.receive("q", { maxMessages: 10 });
      const error = await expectFailure(() => h.broker.receive("q"), "TOO_MANY_IN_FLIGHT");
      expect(error.code).toBe(Code.RESOURCE_EXHAUSTED);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 2, delayed: 0 });
    });

    it("still lets a visibility-0 receive through at the limit", async () => {
      await h.broker.receive("q", { maxMessages: 10 });
      const peek = await receiveOne(h, "q", { visibilityTimeoutMs: 0 });
      expect(text(peek)).toBe("c");
    });

    it("makes room again when a leased message is deleted", async () => {
      const [first] = await h.broker.receive("q", { maxMessages: 10 });
      await h.broker.delete("q", first!.receiptHandle);
      expect(text(await receiveOne(h, "q"))).toBe("c");
    });

    it("makes room again when a lease expires", async () => {
      await h.broker.receive("q", { maxMessages: 10, visibilityTimeoutMs: 1000 });
      h.clock.advance(1000);
      expect((await h.broker.receive("q", { maxMessages: 10 })).map(text)).toEqual(["c", "a"]);
    });

    it("lets a long poll at the limit wait for room, then take a message", async () => {
      const [first] = await h.broker.receive("q", { maxMessages: 10 });
      const poll = track(h.broker.receive("q", { waitTimeMs: 5000 }));
      await flush();
      expect(poll.settled).toBe(false);
      await h.broker.delete("q", first!.receiptHandle);
      expect((await poll.promise).map(text)).toEqual(["c"]);
    });

    it("serves waiting receives when an update raises max_in_flight", async () => {
      await h.broker.receive("q", { maxMessages: 10 });
      const poll = track(h.broker.receive("q", { waitTimeMs: 5000 }));
      await flush();
      expect(poll.settled).toBe(false);
      await h.broker.updateQueue("q", { maxInFlight: 3 });
      expect((await poll.promise).map(text)).toEqual(["c"]);
    });
  });

  describe("retention", () => {
    it("removes visible, in-flight and delayed messages once retention has passed since the send", async () => {
      await createQueue(h, "q", { retentionMs: 60_000, visibilityTimeoutMs: 3600_000 });
      await sendText(h, "q", "in flight");
      const leased = await receiveOne(h, "q");
      await sendText(h, "q", "visible");
      await sendText(h, "q", "delayed", { delayMs: 60_000 });
      h.clock.advance(30_000);
      await sendText(h, "q", "younger");

      h.clock.advance(29_999);
      await h.broker.runMaintenance();
      expect(counts(h, "q")).toEqual({ visible: 2, inFlight: 1, delayed: 1 });

      h.clock.advance(1);
      await h.broker.runMaintenance();
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      await expectFailure(() => h.broker.changeVisibility("q", leased.receiptHandle, 10), "MESSAGE_NOT_FOUND");
      expect((await h.broker.receive("q", { maxMessages: 10 })).map(text)).toEqual(["younger"]);
    });

    it("keeps expired messages gone after a restart", async () => {
      await createQueue(h, "q", { retentionMs: 60_000 });
      await sendText(h, "q", "old");
      h.clock.advance(60_000);
      await h.broker.runMaintenance();
      await h.restart();
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("counts retention from the send, not from the end of a redelivery", async () => {
      await createQueue(h, "q", { retentionMs: 60_000, visibilityTimeoutMs: 50_000 });
      await sendText(h, "q", "m");
      h.clock.advance(20_000);
      await receiveOne(h, "q");
      h.clock.advance(40_000);
      await h.broker.runMaintenance();
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });
  });

  describe("message size", () => {
    beforeEach(async () => {
      await createQueue(h, "q", { maxMessageBytes: 1024 });
    });

    it("accepts a message of exactly max_message_bytes, attributes included", async () => {
      await send(h.broker, "q", ofSize(1024));
      await send(h.broker, "q", ofSize(1000, { ["k".repeat(12)]: "v".repeat(12) }));
      expect(counts(h, "q").visible).toBe(2);
    });

    it("fails MESSAGE_TOO_LARGE on field body when attributes push it over", async () => {
      const error = await expectFailure(
        () => send(h.broker, "q", ofSize(1000, { ["k".repeat(12)]: "v".repeat(13) })),
        "MESSAGE_TOO_LARGE",
        "body",
      );
      expect(error.code).toBe(Code.INVALID_ARGUMENT);
      await expectFailure(() => send(h.broker, "q", ofSize(1025)), "MESSAGE_TOO_LARGE", "body");
      expect(counts(h, "q").visible).toBe(0);
    });

    it("counts attributes in UTF-8 bytes", async () => {
      // "é" is 2 bytes: 1020 + 2 + 2 = 1024 fits, one more "é" does not.
      await send(h.broker, "q", ofSize(1020, { é: "é" }));
      await expectFailure(() => send(h.broker, "q", ofSize(1020, { é: "éé" })), "MESSAGE_TOO_LARGE", "body");
    });

    it("rejects an empty attribute key, or one over 256 bytes, as INVALID_ARGUMENT on attributes", async () => {
      await expectFailure(() => send(h.broker, "q", ofSize(1, { "": "v" })), "INVALID_ARGUMENT", "attributes");
      await expectFailure(
        () => send(h.broker, "q", ofSize(1, { ["k".repeat(257)]: "v" })),
        "INVALID_ARGUMENT",
        "attributes",
      );
      await createQueue(h, "big");
      await send(h.broker, "big", ofSize(1, { ["k".repeat(256)]: "v" }));
    });
  });

  describe("sendBatch", () => {
    beforeEach(async () => {
      await createQueue(h, "q", { maxMessageBytes: 1024 });
    });

    it("returns the ids in order and stores the messages in that order", async () => {
      const ids = await sendBatch(
        h.broker,
        "q",
        ["a", "b", "c"].map((name) => ({ body: body(name) })),
      );
      expect(new Set(ids).size).toBe(3);
      const deliveries = await h.broker.receive("q", { maxMessages: 10 });
      expect(deliveries.map((delivery) => [delivery.messageId, text(delivery)])).toEqual([
        [ids[0], "a"],
        [ids[1], "b"],
        [ids[2], "c"],
      ]);
    });

    it("stores none of the batch when one entry is bad, naming the entry", async () => {
      const entries = [ofSize(10), ofSize(1025), ofSize(10)];
      await expectFailure(() => sendBatch(h.broker, "q", entries), "MESSAGE_TOO_LARGE", "entries[1].body");
      await expectFailure(
        () => sendBatch(h.broker, "q", [ofSize(10), ofSize(10), { body: body("x"), delayMs: -1 }]),
        "INVALID_ARGUMENT",
        "entries[2].delay",
      );
      await expectFailure(
        () => sendBatch(h.broker, "q", [ofSize(10, { "": "x" })]),
        "INVALID_ARGUMENT",
        "entries[0].attributes",
      );
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });

    it("applies each entry's own delay", async () => {
      await sendBatch(h.broker, "q", [{ body: body("now") }, { body: body("later"), delayMs: 1000 }]);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 1 });
    });

    it.each([0, 101])("rejects %d entries as INVALID_ARGUMENT on entries", async (count) => {
      await expectFailure(
        () =>
          sendBatch(
            h.broker,
            "q",
            Array.from({ length: count }, () => ofSize(1)),
          ),
        "INVALID_ARGUMENT",
        "entries",
      );
    });

    it("accepts 100 entries", async () => {
      expect(
        await sendBatch(
          h.broker,
          "q",
          Array.from({ length: 100 }, () => ofSize(1)),
        ),
      ).toHaveLength(100);
      expect(counts(h, "q").visible).toBe(100);
    });
  });

  describe("response and batch byte limits", () => {
    const mib = 1024 * 1024;
    beforeEach(async () => {
      await createQueue(h, "big", { maxMessageBytes: mib });
    });

    it("accepts a SendBatch of exactly 4 MiB and refuses one byte more, storing nothing", async () => {
      const over = [ofSize(mib), ofSize(mib), ofSize(mib), ofSize(mib), ofSize(1)];
      await expectFailure(() => sendBatch(h.broker, "big", over), "MESSAGE_TOO_LARGE", "entries");
      expect(counts(h, "big").visible).toBe(0);
      await sendBatch(h.broker, "big", [ofSize(mib), ofSize(mib), ofSize(mib), ofSize(mib - 1, { k: "" })]);
      expect(counts(h, "big").visible).toBe(4);
    });

    it("holds fewer messages in a receive than asked rather than exceed the response budget", async () => {
      await sendBatch(h.broker, "big", [ofSize(mib), ofSize(mib), ofSize(mib), ofSize(mib)]);
      expect(await h.broker.receive("big", { maxMessages: 10 })).toHaveLength(3);
      expect(await h.broker.receive("big", { maxMessages: 10 })).toHaveLength(1);
    });
  });

  describe("max_messages", () => {
    beforeEach(async () => {
      await createQueue(h, "q");
      await sendBatch(
        h.broker,
        "q",
        Array.from({ length: 100 }, () => ofSize(1)),
      );
      await sendText(h, "q", "extra");
    });

    it("receives one message when max_messages is 0 or unset", async () => {
      expect(await h.broker.receive("q")).toHaveLength(1);
      expect(await h.broker.receive("q", { maxMessages: 0 })).toHaveLength(1);
    });

    it("receives up to 100 messages at once", async () => {
      expect(await h.broker.receive("q", { maxMessages: 100 })).toHaveLength(100);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 100, delayed: 0 });
    });

    it.each([101, -1, 1.5])("rejects max_messages %d as INVALID_ARGUMENT on max_messages", async (maxMessages) => {
      await expectFailure(() => h.broker.receive("q", { maxMessages }), "INVALID_ARGUMENT", "max_messages");
      expect(counts(h, "q").inFlight).toBe(0);
    });

    it("rejects a wait time over 20 s as INVALID_ARGUMENT on wait_time", async () => {
      await expectFailure(() => h.broker.receive("q", { waitTimeMs: 20_001 }), "INVALID_ARGUMENT", "wait_time");
      await expectFailure(() => h.broker.receive("q", { waitTimeMs: -1 }), "INVALID_ARGUMENT", "wait_time");
    });
  });

  describe("long polling", () => {
    beforeEach(async () => {
      await createQueue(h, "q", { visibilityTimeoutMs: 10_000 });
    });

    /** Starts a long poll and checks that it is waiting. */
    async function startPoll(waitTimeMs = 5000, maxMessages = 1, signal?: AbortSignal) {
      const poll = track(h.broker.receive("q", { waitTimeMs, maxMessages, signal }));
      await flush();
      expect(poll.settled, "poll is waiting").toBe(false);
      return poll;
    }

    it("returns a message sent while it waits", async () => {
      const poll = await startPoll();
      h.clock.advance(1000);
      await sendText(h, "q", "arrived");
      const [delivery] = await poll.promise;
      expect(text(delivery!)).toBe("arrived");
      expect(delivery!.leaseDeadline).toBe(h.clock.now() + 10_000);
    });

    it("returns at once when a message is already visible", async () => {
      await sendText(h, "q", "ready");
      expect((await h.broker.receive("q", { waitTimeMs: 5000 })).map(text)).toEqual(["ready"]);
    });

    it("returns a message whose lease expires while it waits", async () => {
      await sendText(h, "q", "m");
      const first = await receiveOne(h, "q");
      const poll = await startPoll(15_000);
      h.clock.advance(9999);
      await flush();
      expect(poll.settled).toBe(false);
      h.clock.advance(1);
      const [again] = await poll.promise;
      expect(again!.messageId).toBe(first.messageId);
      expect(again!.receiveCount).toBe(2);
    });

    it("returns a delayed message when its delay ends", async () => {
      await sendText(h, "q", "m", { delayMs: 3000 });
      const poll = await startPoll();
      h.clock.advance(3000);
      expect((await poll.promise).map(text)).toEqual(["m"]);
    });

    it("returns nothing at the end of the wait, not before", async () => {
      const poll = await startPoll(5000);
      h.clock.advance(4999);
      await flush();
      expect(poll.settled).toBe(false);
      h.clock.advance(1);
      expect(await poll.promise).toEqual([]);
    });

    it("waits for the queue's receive_wait_time when the receive sets none", async () => {
      await createQueue(h, "patient", { receiveWaitTimeMs: 2000 });
      const poll = track(h.broker.receive("patient"));
      await flush();
      expect(poll.settled).toBe(false);
      h.clock.advance(2000);
      expect(await poll.promise).toEqual([]);
    });

    it("never gives the same message to two concurrent long polls", async () => {
      const first = await startPoll(5000, 10);
      const second = await startPoll(5000, 10);
      await sendText(h, "q", "one");
      await sendText(h, "q", "two");
      h.clock.advance(5000);
      const [a, b] = await Promise.all([first.promise, second.promise]);
      const ids = [...a!, ...b!].map((delivery) => delivery.messageId);
      expect(ids).toHaveLength(2);
      expect(new Set(ids).size).toBe(2);
      expect(counts(h, "q")).toEqual({ visible: 0, inFlight: 2, delayed: 0 });
    });

    it("serves waiting polls oldest first", async () => {
      const first = await startPoll();
      const second = await startPoll();
      await sendText(h, "q", "one");
      expect((await first.promise).map(text)).toEqual(["one"]);
      await flush();
      expect(second.settled).toBe(false);
      await sendText(h, "q", "two");
      expect((await second.promise).map(text)).toEqual(["two"]);
    });

    it("takes nothing when its signal is already aborted", async () => {
      await sendText(h, "q", "m");
      const controller = new AbortController();
      controller.abort();
      expect(await h.broker.receive("q", { signal: controller.signal, waitTimeMs: 5000 })).toEqual([]);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      expect((await receiveOne(h, "q")).receiveCount).toBe(1);
    });

    it("gives the messages back when the caller leaves before the answer", async () => {
      await sendText(h, "q", "m");
      const controller = new AbortController();
      const receiving = h.broker.receive("q", { signal: controller.signal });
      controller.abort();
      expect(await receiving).toEqual([]);
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
      expect(text(await receiveOne(h, "q"))).toBe("m");
    });

    it("ends empty-handed when aborted while waiting, and leaves later messages to others", async () => {
      const controller = new AbortController();
      const poll = await startPoll(5000, 1, controller.signal);
      controller.abort();
      expect(await poll.promise).toEqual([]);
      await sendText(h, "q", "m");
      expect(counts(h, "q")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    });

    it("fails waiting receives with QUEUE_NOT_FOUND when the queue is deleted", async () => {
      const poll = await startPoll();
      await h.broker.deleteQueue("q");
      await expectFailure(() => poll.promise, "QUEUE_NOT_FOUND");
    });

    it("fails waiting receives with SHUTTING_DOWN (retryable) when the broker closes", async () => {
      const poll = await startPoll();
      h.broker.close();
      await expectFailure(() => poll.promise, "SHUTTING_DOWN");
    });
  });
});
