import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueConfigInput } from "../../src/broker/queue-config.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendAndReceive,
  sendText,
  text,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 1000;

describe("dead-letter queues", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "dlq");
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  async function createSource(maxReceiveCount: number, extra: QueueConfigInput = {}): Promise<void> {
    await createQueue(h, "work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount },
      ...extra,
    });
  }

  /** Yields to I/O until a queue shows `count` visible messages; fails if that never happens. */
  async function untilVisible(queue: string, count: number): Promise<void> {
    for (let turn = 0; turn < 1000 && counts(h, queue).visible < count; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(counts(h, queue).visible).toBe(count);
  }

  /** Lets background moves (a read, then a write) finish, and runs what is due. */
  async function settle(): Promise<void> {
    await h.broker.settled();
    await h.broker.runMaintenance();
  }

  it("delivers exactly max_receive_count times, then moves the message once, with its fields and receive history, when the last lease ends", async () => {
    await createSource(3);
    const id = await sendText(h, "work", "poison", { attributes: { kind: "bad" } });
    const sendTime = h.clock.now();
    h.clock.advance(7);
    const firstReceiveTime = h.clock.now();
    for (let delivery = 1; delivery <= 3; delivery++) {
      const message = await receiveOne(h, "work");
      expect(message.receiveCount).toBe(delivery);
      h.clock.advance(vt - 1);
      await settle();
      expect(counts(h, "dlq").visible).toBe(0); // nothing early
      h.clock.advance(1);
      await settle();
    }
    expect(counts(h, "work")).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(counts(h, "dlq")).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    // Moved the moment the last lease ended; the receive count and first receive come along, as AWS's do.
    const deadLetteredTime = firstReceiveTime + 3 * vt;
    h.clock.advance(11);
    expect((await h.broker.peekMessages("dlq")).messages[0]).toMatchObject({
      receiveCount: 3,
      firstReceiveTime,
      deadLetteredTime,
    });
    const dead = await receiveOne(h, "dlq");
    expect(dead).toMatchObject({
      messageId: id,
      // Counting on in the dead-letter queue, as AWS's ApproximateReceiveCount does.
      receiveCount: 4,
      firstReceiveTime,
      sendTime,
      attributes: { kind: "bad" },
      deadLetter: { sourceQueue: "work", reason: "MAX_RECEIVE_COUNT_EXCEEDED" },
    });
    expect(text(dead)).toBe("poison");
    expect(h.broker.getQueue("dlq").deadLetterSourceQueues).toEqual(["work"]);
  });

  it("with max_receive_count 1 and a visibility timeout of 0, delivers once and dead-letters at once", async () => {
    await createSource(1);
    await sendText(h, "work", "once");
    const [only] = await h.broker.receive("work", { visibilityTimeoutMs: 0 });
    expect(only!.receiveCount).toBe(1);
    await settle();
    expect(await h.broker.receive("work", { visibilityTimeoutMs: 0 })).toEqual([]);
    expect(counts(h, "dlq").visible).toBe(1);
  });

  it("dead-letters a message released on its last delivery, without a backoff", async () => {
    await createSource(1, { retryPolicy: { minBackoffMs: 60_000, maxBackoffMs: 60_000 } });
    await sendText(h, "work", "x");
    h.clock.advance(5);
    const message = await receiveOne(h, "work");
    h.clock.advance(20);
    await h.broker.changeVisibility("work", message.receiptHandle, 0);
    await settle();
    expect(counts(h, "dlq").visible).toBe(1);
    expect(counts(h, "work").visible + counts(h, "work").delayed).toBe(0);
    // A retry policy's dead-letter move keeps the receive history too.
    expect((await h.broker.peekMessages("dlq")).messages[0]).toMatchObject({
      receiveCount: 1,
      firstReceiveTime: message.firstReceiveTime,
      deadLetteredTime: message.firstReceiveTime + 20,
    });
  });

  it("a message whose last lease ran out while the broker was down is dead-lettered at start, not delivered", async () => {
    await createSource(1);
    await sendText(h, "work", "x");
    const { firstReceiveTime } = await receiveOne(h, "work");
    h.broker.close();
    h.clock.advance(vt * 5);
    await h.restart();
    await settle();
    expect(await h.broker.receive("work")).toEqual([]);
    expect(counts(h, "dlq").visible).toBe(1);
    // The history is stored with the move: a restart reads it back.
    await h.restart();
    expect((await h.broker.peekMessages("dlq")).messages[0]).toMatchObject({
      receiveCount: 1,
      firstReceiveTime,
      deadLetteredTime: firstReceiveTime + vt * 5,
    });
  });

  it("catches spent messages at delivery when a lower max_receive_count is set later", async () => {
    await createSource(5);
    await sendText(h, "work", "x");
    await receiveOne(h, "work", { visibilityTimeoutMs: 0 });
    await receiveOne(h, "work", { visibilityTimeoutMs: 0 });
    await h.broker.updateQueue("work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 2 },
    });
    expect(await h.broker.receive("work")).toEqual([]);
    await settle();
    expect(counts(h, "dlq").visible).toBe(1);
  });

  it("counts retention in the dead-letter queue from the message's arrival there", async () => {
    await createQueue(h, "short-dlq", { retentionMs: 3600_000 });
    await createQueue(h, "src", {
      visibilityTimeoutMs: vt,
      retentionMs: 3600_000,
      redrivePolicy: { deadLetterQueue: "short-dlq", maxReceiveCount: 1 },
    });
    await sendText(h, "src", "x");
    h.clock.advance(3600_000 - 2 * vt);
    await receiveOne(h, "src");
    h.clock.advance(vt);
    await settle();
    expect(counts(h, "short-dlq").visible).toBe(1);
    h.clock.advance(30 * 60_000); // past the original send + retention, not past the arrival + retention
    await settle();
    expect(counts(h, "short-dlq").visible).toBe(1);
  });

  describe("retry backoff", () => {
    it("spaces redeliveries by min_backoff × 2^(n−1), capped at max_backoff", async () => {
      await createQueue(h, "backoff", {
        visibilityTimeoutMs: vt,
        retryPolicy: { minBackoffMs: 1000, maxBackoffMs: 5000 },
      });
      await sendText(h, "backoff", "x");
      for (const expected of [1000, 2000, 4000, 5000, 5000]) {
        await receiveOne(h, "backoff");
        h.clock.advance(vt);
        await settle();
        h.clock.advance(expected - 1);
        expect(await h.broker.receive("backoff"), `not before ${expected} ms`).toEqual([]);
        h.clock.advance(1);
      }
      expect((await receiveOne(h, "backoff")).receiveCount).toBe(6);
    });

    it("does not apply to an explicit ChangeVisibility", async () => {
      await createQueue(h, "backoff", {
        visibilityTimeoutMs: vt,
        retryPolicy: { minBackoffMs: 60_000, maxBackoffMs: 60_000 },
      });
      await sendText(h, "backoff", "x");
      const message = await receiveOne(h, "backoff");
      await h.broker.changeVisibility("backoff", message.receiptHandle, 0);
      expect((await receiveOne(h, "backoff")).receiveCount).toBe(2);
    });

    it("applies when a Heartbeat stream breaks", async () => {
      await createQueue(h, "backoff", {
        visibilityTimeoutMs: vt,
        retryPolicy: { minBackoffMs: 3000, maxBackoffMs: 3000 },
      });
      await sendText(h, "backoff", "x");
      const message = await receiveOne(h, "backoff");
      const stream = h.broker.streams.open({ leasesExpired: () => undefined, brokerClosing: () => undefined });
      await h.broker.streams.renew(stream, "backoff", [{ receiptHandle: message.receiptHandle }]);
      await h.broker.streams.close(stream, true);
      expect(counts(h, "backoff")).toMatchObject({ delayed: 1, inFlight: 0 });
      h.clock.advance(2999);
      expect(await h.broker.receive("backoff")).toEqual([]);
      h.clock.advance(1);
      expect((await receiveOne(h, "backoff")).messageId).toBe(message.messageId);
    });
  });

  describe("redrive", () => {
    async function deadLetterSome(count: number): Promise<string[]> {
      await createSource(1);
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await sendText(h, "work", `m${i}`, { attributes: { n: String(i) } }));
      await h.broker.receive("work", { maxMessages: count });
      h.clock.advance(vt);
      await settle();
      expect(counts(h, "dlq").visible).toBe(count);
      return ids;
    }

    it("moves messages back to their source queue, visible, with receive_count reset and id, body and attributes intact", async () => {
      const ids = await deadLetterSome(3);
      expect(await h.broker.redriveMessages("dlq", "", 0, 0)).toBe(3);
      expect(counts(h, "dlq").visible).toBe(0);
      const back = await h.broker.receive("work", { maxMessages: 10 });
      expect(back.map((m) => m.messageId).sort()).toEqual([...ids].sort());
      // The receive history starts again: a message redriven with its count kept would be spent on arrival.
      const redriveTime = h.clock.now();
      expect(back.map((m) => [m.receiveCount, m.firstReceiveTime, m.deadLetter])).toEqual([
        [1, redriveTime, undefined],
        [1, redriveTime, undefined],
        [1, redriveTime, undefined],
      ]);
      expect(back.map(text).sort()).toEqual(["m0", "m1", "m2"]);
    });

    it("keeps a message whose source queue is gone in arrival order, so retention and the oldest age still find it", async () => {
      await createQueue(h, "dlq-short", { retentionMs: 120_000 });
      const policy = { deadLetterQueue: "dlq-short", maxReceiveCount: 1 };
      await createQueue(h, "gone", { visibilityTimeoutMs: vt, redrivePolicy: policy });
      await createQueue(h, "kept", { visibilityTimeoutMs: vt, redrivePolicy: policy });
      const oldSendTime = h.clock.now();
      await sendAndReceive(h, "gone", "old");
      h.clock.advance(vt);
      await settle();
      h.clock.advance(30_000);
      await sendAndReceive(h, "kept", "young");
      h.clock.advance(vt);
      await settle();
      // The young one is leased, so a redrive leaves it; the old one cannot leave: its source is gone.
      const both = await h.broker.receive("dlq-short", { maxMessages: 2, visibilityTimeoutMs: 600_000 });
      await h.broker.changeVisibility("dlq-short", both.find((message) => text(message) === "old")!.receiptHandle, 0);
      await h.broker.deleteQueue("gone");
      expect(await h.broker.redriveMessages("dlq-short", "", 0, 0)).toBe(0);

      expect(h.broker.getQueue("dlq-short").oldestMessageAgeMs).toBe(h.clock.now() - oldSendTime);
      // Past the old one's retention (from its arrival), not the young one's.
      h.clock.advance(120_000 - 30_000 - vt);
      await settle();
      expect(counts(h, "dlq-short")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
    });

    it("moves to another queue, at most max_messages, leaving in-flight ones", async () => {
      await deadLetterSome(4);
      await createQueue(h, "elsewhere");
      const inFlight = await receiveOne(h, "dlq", { visibilityTimeoutMs: 60_000 });
      expect(await h.broker.redriveMessages("dlq", "elsewhere", 2, 0)).toBe(2);
      expect(counts(h, "elsewhere").visible).toBe(2);
      expect(counts(h, "dlq")).toMatchObject({ visible: 1, inFlight: 1 });
      await h.broker.delete("dlq", inFlight.receiptHandle);
    });

    it("keeps to max_per_second", async () => {
      await deadLetterSome(5);
      const redrive = h.broker.redriveMessages("dlq", "", 0, 2);
      await untilVisible("work", 2);
      h.clock.advance(999);
      await settle();
      expect(counts(h, "work").visible).toBe(2);
      h.clock.advance(1);
      await untilVisible("work", 4);
      await h.broker.settled(); // the redrive arms its pacing timer
      await new Promise((resolve) => setImmediate(resolve));
      h.clock.advance(1000);
      await untilVisible("work", 5);
      await new Promise((resolve) => setImmediate(resolve));
      h.clock.advance(1000);
      expect(await redrive).toBe(5);
    });

    it("refuses an unknown queue or the dead-letter queue itself as destination", async () => {
      await expectFailure(() => h.broker.redriveMessages("nope", "", 0, 0), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.redriveMessages("dlq", "nope", 0, 0), "QUEUE_NOT_FOUND");
      await expectFailure(() => h.broker.redriveMessages("dlq", "dlq", 0, 0), "INVALID_ARGUMENT", "destination_queue");
    });

    it("refuses a max_messages or max_per_second out of range", async () => {
      const tooMany = await expectFailure(
        () => h.broker.redriveMessages("dlq", "", 2 ** 53, 0),
        "INVALID_ARGUMENT",
        "max_messages",
      );
      expect(tooMany.violations[0]!.description).toBe("must be 0 (all) to 9007199254740991");
      await expectFailure(() => h.broker.redriveMessages("dlq", "", -1, 0), "INVALID_ARGUMENT", "max_messages");
      await expectFailure(() => h.broker.redriveMessages("dlq", "", 0, -1), "INVALID_ARGUMENT", "max_per_second");
    });
  });

  describe("configuration", () => {
    it("requires the dead-letter queue to exist and to be another queue", async () => {
      await expectFailure(
        () => h.broker.createQueue("a", { redrivePolicy: { deadLetterQueue: "missing", maxReceiveCount: 3 } }),
        "DEAD_LETTER_QUEUE_NOT_FOUND",
      );
      await expectFailure(
        () => h.broker.createQueue("a", { redrivePolicy: { deadLetterQueue: "a", maxReceiveCount: 3 } }),
        "INVALID_ARGUMENT",
        "config.redrive_policy.dead_letter_queue",
      );
      for (const maxReceiveCount of [0, 1001]) {
        await expectFailure(
          () => h.broker.createQueue("a", { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount } }),
          "INVALID_ARGUMENT",
          "config.redrive_policy.max_receive_count",
        );
      }
      await expectFailure(
        () => h.broker.createQueue("a", { retryPolicy: { minBackoffMs: 5000, maxBackoffMs: 1000 } }),
        "INVALID_ARGUMENT",
        "config.retry_policy.max_backoff",
      );
    });

    it("an update may add, change or remove the redrive policy", async () => {
      await createQueue(h, "other-dlq");
      await createQueue(h, "work");
      await h.broker.updateQueue("work", { redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 2 } });
      expect(h.broker.getQueue("dlq").deadLetterSourceQueues).toEqual(["work"]);
      await h.broker.updateQueue("work", { redrivePolicy: { deadLetterQueue: "other-dlq", maxReceiveCount: 4 } });
      expect(h.broker.getQueue("work").config.redrivePolicy).toEqual({
        deadLetterQueue: "other-dlq",
        maxReceiveCount: 4,
      });
      expect(h.broker.getQueue("dlq").deadLetterSourceQueues).toEqual([]);
      await h.broker.updateQueue("work", {});
      expect(h.broker.getQueue("work").config.redrivePolicy).toBeUndefined();
    });

    it("refuses to delete a dead-letter queue in use with QUEUE_IN_USE; a queue with a redrive policy can be deleted", async () => {
      await createSource(3);
      await expectFailure(() => h.broker.deleteQueue("dlq"), "QUEUE_IN_USE");
      await h.broker.deleteQueue("work");
      await h.broker.deleteQueue("dlq");
      expect(h.broker.listQueues().queues).toEqual([]);
    });

    it("keeps policies across a restart", async () => {
      await createSource(3, { retryPolicy: { minBackoffMs: 100, maxBackoffMs: 900 } });
      await h.restart();
      expect(h.broker.getQueue("work").config).toMatchObject({
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoffMs: 100, maxBackoffMs: 900 },
      });
    });
  });
});
