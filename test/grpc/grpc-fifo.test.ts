// FIFO queues over gRPC, on a real server (LevelDB, PostgreSQL, and a
// 3-broker cluster whose called broker owns no shards): every FIFO field of
// the wire (QueueConfig, Send and SendBatch, their responses, ReceivedMessage
// and PeekedMessage) and every FIFO reason with its field violation. The
// rules themselves are test/broker/broker-fifo.test.ts's; leases, heartbeats
// and restarts are grpc-fifo-leases.test.ts's.
import { createHash } from "node:crypto";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessageState } from "../../gen/holdshelf/v1/message_pb.js";
import { DeduplicationScope } from "../../gen/holdshelf/v1/queue_pb.js";
import { deduplicationWindowMs } from "../../src/broker/fifo-deduplication.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";

const sequenceNumberPattern = /^\d{20}$/;
const bytes = (body: string): Buffer => Buffer.from(body);

describe("FIFO queues over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
  });
  afterEach(async () => {
    await h.stop();
  });

  async function visible(queue: string): Promise<bigint> {
    return (await h.rpc.getQueue({ name: queue })).queue!.stats!.visible;
  }

  describe("QueueConfig", () => {
    it("creates a FIFO queue and reads fifo, content_based_deduplication and deduplication_scope back", async () => {
      const created = (
        await h.rpc.createQueue({
          name: "orders.fifo",
          config: { fifo: true, contentBasedDeduplication: true, deduplicationScope: DeduplicationScope.MESSAGE_GROUP },
        })
      ).queue!;
      const expected = {
        fifo: true,
        contentBasedDeduplication: true,
        deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      };
      expect(created.config).toMatchObject(expected);
      expect((await h.rpc.getQueue({ name: "orders.fifo" })).queue!.config).toMatchObject(expected);
      expect((await h.rpc.listQueues({})).queues[0]!.config).toMatchObject(expected);
      // The default scope is filled in: QUEUE, not UNSPECIFIED.
      const plainFifo = (await h.rpc.createQueue({ name: "plain-fifo", config: { fifo: true } })).queue!;
      expect(plainFifo.config).toMatchObject({
        fifo: true,
        contentBasedDeduplication: false,
        deduplicationScope: DeduplicationScope.QUEUE,
      });
      const standard = (await h.rpc.createQueue({ name: "standard" })).queue!;
      expect(standard.config).toMatchObject({
        fifo: false,
        contentBasedDeduplication: false,
        deduplicationScope: DeduplicationScope.UNSPECIFIED,
      });
    });

    it("compares FIFO settings when a queue is created again", async () => {
      const config = { fifo: true, deduplicationScope: DeduplicationScope.QUEUE };
      const first = (await h.rpc.createQueue({ name: "again", config })).queue!;
      // The scope left unset is the same as QUEUE: a safe retry.
      expect((await h.rpc.createQueue({ name: "again", config: { fifo: true } })).queue!.createTime).toEqual(
        first.createTime,
      );
      await expectRpcError(
        h.rpc.createQueue({ name: "again", config: { fifo: true, contentBasedDeduplication: true } }),
        status.ALREADY_EXISTS,
        "QUEUE_ALREADY_EXISTS",
      );
      await expectRpcError(h.rpc.createQueue({ name: "again" }), status.ALREADY_EXISTS, "QUEUE_ALREADY_EXISTS");
    });

    it("refuses UpdateQueue changing fifo either way, naming config.fifo", async () => {
      await h.rpc.createQueue({ name: "f", config: { fifo: true } });
      await h.rpc.createQueue({ name: "s" });
      await expectRpcError(
        h.rpc.updateQueue({ name: "f", config: {} }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.fifo",
      );
      await expectRpcError(
        h.rpc.updateQueue({ name: "s", config: { fifo: true } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.fifo",
      );
      // Keeping fifo while changing the rest is an update like any other.
      const updated = (await h.rpc.updateQueue({ name: "f", config: { fifo: true, contentBasedDeduplication: true } }))
        .queue!;
      expect(updated.config).toMatchObject({ fifo: true, contentBasedDeduplication: true });
    });

    it("refuses an unknown DeduplicationScope number, FIFO settings on a standard queue, and a .fifo name for one", async () => {
      await expectRpcError(
        h.rpc.createQueue({ name: "f", config: { fifo: true, deduplicationScope: 7 as DeduplicationScope } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.deduplication_scope",
      );
      await expectRpcError(
        h.rpc.createQueue({ name: "s", config: { contentBasedDeduplication: true } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.content_based_deduplication",
      );
      await expectRpcError(
        h.rpc.createQueue({ name: "s", config: { deduplicationScope: DeduplicationScope.QUEUE } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.deduplication_scope",
      );
      await expectRpcError(
        h.rpc.createQueue({ name: "s.fifo" }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.fifo",
      );
      expect((await h.rpc.listQueues({})).queues).toEqual([]);
    });

    it("needs a FIFO dead-letter queue for a FIFO queue", async () => {
      await h.rpc.createQueue({ name: "plain-dlq" });
      await expectRpcError(
        h.rpc.createQueue({
          name: "f",
          config: { fifo: true, redrivePolicy: { deadLetterQueue: "plain-dlq", maxReceiveCount: 2 } },
        }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "config.redrive_policy.dead_letter_queue",
      );
    });
  });

  describe("Send and SendBatch", () => {
    beforeEach(async () => {
      await h.rpc.createQueue({ name: "f", config: { fifo: true } });
      await h.rpc.createQueue({ name: "s" });
    });

    it("answers a FIFO send without a group with MESSAGE_GROUP_ID_REQUIRED, without a deduplication id with DEDUPLICATION_ID_REQUIRED", async () => {
      await expectRpcError(
        h.rpc.send({ queue: "f", body: bytes("x"), deduplicationId: "d" }),
        status.INVALID_ARGUMENT,
        "MESSAGE_GROUP_ID_REQUIRED",
        "message_group_id",
      );
      await expectRpcError(
        h.rpc.send({ queue: "f", body: bytes("x"), messageGroupId: "g" }),
        status.INVALID_ARGUMENT,
        "DEDUPLICATION_ID_REQUIRED",
        "deduplication_id",
      );
      await expectRpcError(
        h.rpc.send({ queue: "f", body: bytes("x"), messageGroupId: "has space", deduplicationId: "d" }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "message_group_id",
      );
      expect(await visible("f")).toBe(0n);
    });

    it("refuses a per-message delay on a FIFO queue, even 0, with INVALID_ARGUMENT on delay", async () => {
      for (const delay of [durationFromMs(0), durationFromMs(1000)]) {
        await expectRpcError(
          h.rpc.send({ queue: "f", body: bytes("x"), messageGroupId: "g", deduplicationId: "d", delay }),
          status.INVALID_ARGUMENT,
          "INVALID_ARGUMENT",
          "delay",
        );
      }
      expect(await visible("f")).toBe(0n);
    });

    it("answers group or deduplication ids on a standard queue with NOT_A_FIFO_QUEUE", async () => {
      await expectRpcError(
        h.rpc.send({ queue: "s", body: bytes("x"), messageGroupId: "g" }),
        status.INVALID_ARGUMENT,
        "NOT_A_FIFO_QUEUE",
        "message_group_id",
      );
      await expectRpcError(
        h.rpc.send({ queue: "s", body: bytes("x"), deduplicationId: "d" }),
        status.INVALID_ARGUMENT,
        "NOT_A_FIFO_QUEUE",
        "deduplication_id",
      );
      expect(await visible("s")).toBe(0n);
    });

    it("names the failing SendBatch entry, and stores none of the batch", async () => {
      const ok = { body: bytes("ok"), messageGroupId: "g", deduplicationId: "ok" };
      await expectRpcError(
        h.rpc.sendBatch({ queue: "f", entries: [ok, { body: bytes("x"), deduplicationId: "d" }] }),
        status.INVALID_ARGUMENT,
        "MESSAGE_GROUP_ID_REQUIRED",
        "entries[1].message_group_id",
      );
      await expectRpcError(
        h.rpc.sendBatch({
          queue: "f",
          entries: [ok, { ...ok, deduplicationId: "2" }, { body: bytes("x"), messageGroupId: "g" }],
        }),
        status.INVALID_ARGUMENT,
        "DEDUPLICATION_ID_REQUIRED",
        "entries[2].deduplication_id",
      );
      await expectRpcError(
        h.rpc.sendBatch({ queue: "f", entries: [{ ...ok, delay: durationFromMs(0) }] }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "entries[0].delay",
      );
      await expectRpcError(
        h.rpc.sendBatch({ queue: "s", entries: [{ body: bytes("fine") }, { body: bytes("x"), messageGroupId: "g" }] }),
        status.INVALID_ARGUMENT,
        "NOT_A_FIFO_QUEUE",
        "entries[1].message_group_id",
      );
      expect(await visible("f")).toBe(0n);
      expect(await visible("s")).toBe(0n);
    });

    it("returns 20-digit sequence numbers increasing in send order; none on a standard queue", async () => {
      const single = await h.rpc.send({ queue: "f", body: bytes("a"), messageGroupId: "g", deduplicationId: "1" });
      expect(single.sequenceNumber).toMatch(sequenceNumberPattern);
      const batch = await h.rpc.sendBatch({
        queue: "f",
        entries: [
          { body: bytes("b"), messageGroupId: "g", deduplicationId: "2" },
          { body: bytes("c"), messageGroupId: "h", deduplicationId: "3" },
        ],
      });
      expect(batch.messageIds).toHaveLength(2);
      expect(batch.sequenceNumbers).toHaveLength(2);
      const numbers = [single.sequenceNumber, ...batch.sequenceNumbers];
      for (const number of numbers) expect(number).toMatch(sequenceNumberPattern);
      // Text order is numeric order (20 digits), and it is send order.
      expect([...numbers].sort()).toEqual(numbers);
      expect(new Set(numbers).size).toBe(3);

      expect((await h.rpc.send({ queue: "s", body: bytes("x") })).sequenceNumber).toBe("");
      const standardBatch = await h.rpc.sendBatch({
        queue: "s",
        entries: [{ body: bytes("x") }, { body: bytes("y") }],
      });
      expect(standardBatch.messageIds).toHaveLength(2);
      expect(standardBatch.sequenceNumbers).toEqual([]);
    });

    it("answers a duplicate send with the first send's id and sequence number, storing it once", async () => {
      const first = await h.rpc.send({ queue: "f", body: bytes("a"), messageGroupId: "g", deduplicationId: "order-1" });
      clock.advance(deduplicationWindowMs - 1);
      // Another body and group: under the QUEUE scope only the id counts.
      const again = await h.rpc.send({
        queue: "f",
        body: bytes("b"),
        messageGroupId: "other",
        deduplicationId: "order-1",
      });
      expect({ messageId: again.messageId, sequenceNumber: again.sequenceNumber }).toEqual({
        messageId: first.messageId,
        sequenceNumber: first.sequenceNumber,
      });
      const batch = await h.rpc.sendBatch({
        queue: "f",
        entries: [
          { body: bytes("c"), messageGroupId: "g", deduplicationId: "order-1" },
          { body: bytes("d"), messageGroupId: "g", deduplicationId: "order-2" },
          { body: bytes("e"), messageGroupId: "g", deduplicationId: "order-2" },
        ],
      });
      expect(batch.messageIds[0]).toBe(first.messageId);
      expect(batch.sequenceNumbers[0]).toBe(first.sequenceNumber);
      expect(batch.messageIds[2]).toBe(batch.messageIds[1]);
      expect(batch.sequenceNumbers[2]).toBe(batch.sequenceNumbers[1]);
      expect(await visible("f")).toBe(2n);
      // Past the window the id is new again.
      clock.advance(1);
      const later = await h.rpc.send({ queue: "f", body: bytes("a"), messageGroupId: "g", deduplicationId: "order-1" });
      expect(later.messageId).not.toBe(first.messageId);
      expect(later.sequenceNumber > batch.sequenceNumbers[1]!).toBe(true);
      expect(await visible("f")).toBe(3n);
    });

    it("deduplicates by body with content_based_deduplication, and per group with the MESSAGE_GROUP scope", async () => {
      await h.rpc.createQueue({ name: "content", config: { fifo: true, contentBasedDeduplication: true } });
      const first = await h.rpc.send({ queue: "content", body: bytes("same"), messageGroupId: "g" });
      expect((await h.rpc.send({ queue: "content", body: bytes("same"), messageGroupId: "g" })).messageId).toBe(
        first.messageId,
      );
      expect(await visible("content")).toBe(1n);

      await h.rpc.createQueue({
        name: "per-group",
        config: { fifo: true, deduplicationScope: DeduplicationScope.MESSAGE_GROUP },
      });
      const a = await h.rpc.send({
        queue: "per-group",
        body: bytes("1"),
        messageGroupId: "a",
        deduplicationId: "same",
      });
      const b = await h.rpc.send({
        queue: "per-group",
        body: bytes("1"),
        messageGroupId: "b",
        deduplicationId: "same",
      });
      expect(b.messageId).not.toBe(a.messageId);
      expect(
        (await h.rpc.send({ queue: "per-group", body: bytes("2"), messageGroupId: "a", deduplicationId: "same" }))
          .messageId,
      ).toBe(a.messageId);
      expect(await visible("per-group")).toBe(2n);
    });
  });

  describe("ReceivedMessage and PeekedMessage", () => {
    it("carry message_group_id, sequence_number and deduplication_id; empty on a standard queue", async () => {
      await h.rpc.createQueue({
        name: "f",
        config: { fifo: true, contentBasedDeduplication: true, visibilityTimeout: durationFromMs(10_000) },
      });
      const explicit = await h.rpc.send({
        queue: "f",
        body: bytes("first"),
        messageGroupId: "customer-1",
        deduplicationId: "order-1",
      });
      const byContent = await h.rpc.send({ queue: "f", body: bytes("second"), messageGroupId: "customer-1" });
      const sha256 = createHash("sha256").update("second").digest("hex");

      const peeked = (await h.rpc.peekMessages({ queue: "f" })).messages;
      expect(peeked.map((m) => [m.messageId, m.messageGroupId, m.sequenceNumber, m.deduplicationId, m.state])).toEqual([
        [explicit.messageId, "customer-1", explicit.sequenceNumber, "order-1", MessageState.VISIBLE],
        [byContent.messageId, "customer-1", byContent.sequenceNumber, sha256, MessageState.VISIBLE],
      ]);

      const received = (await h.rpc.receive({ queue: "f", maxMessages: 10 })).messages;
      expect(
        received.map((m) => [m.messageId, text(m), m.messageGroupId, m.sequenceNumber, m.deduplicationId]),
      ).toEqual([
        [explicit.messageId, "first", "customer-1", explicit.sequenceNumber, "order-1"],
        [byContent.messageId, "second", "customer-1", byContent.sequenceNumber, sha256],
      ]);
      // A peek of a leased message still shows them.
      expect((await h.rpc.peekMessages({ queue: "f" })).messages[0]).toMatchObject({
        state: MessageState.IN_FLIGHT,
        messageGroupId: "customer-1",
        sequenceNumber: explicit.sequenceNumber,
      });

      await h.rpc.createQueue({ name: "s" });
      await h.rpc.send({ queue: "s", body: bytes("x") });
      const empty = { messageGroupId: "", sequenceNumber: "", deduplicationId: "" };
      expect((await h.rpc.peekMessages({ queue: "s" })).messages[0]).toMatchObject(empty);
      expect((await h.rpc.receive({ queue: "s" })).messages[0]).toMatchObject(empty);
    });

    it("delivers a group in send order, nothing more of it while one is leased, other groups meanwhile", async () => {
      await h.rpc.createQueue({ name: "f", config: { fifo: true, visibilityTimeout: durationFromMs(10_000) } });
      const entries = ["a1", "b1", "a2", "a3", "b2"].map((body) => ({
        body: bytes(body),
        messageGroupId: body[0]!,
        deduplicationId: body,
      }));
      await h.rpc.sendBatch({ queue: "f", entries });
      const [a1] = (await h.rpc.receive({ queue: "f", maxMessages: 1 })).messages;
      expect(text(a1!)).toBe("a1");
      // Group a is blocked by a1's lease; b is delivered, in order.
      expect((await h.rpc.receive({ queue: "f", maxMessages: 10 })).messages.map(text)).toEqual(["b1", "b2"]);
      expect((await h.rpc.receive({ queue: "f", maxMessages: 10 })).messages).toEqual([]);
      await h.rpc.delete({ queue: "f", receiptHandle: a1!.receiptHandle });
      expect((await h.rpc.receive({ queue: "f", maxMessages: 10 })).messages.map(text)).toEqual(["a2", "a3"]);
    });

    it("dead-letters a FIFO message with its group, a new sequence number, and its message id as deduplication id", async () => {
      await h.rpc.createQueue({ name: "dlq.fifo", config: { fifo: true } });
      await h.rpc.createQueue({
        name: "f",
        config: {
          fifo: true,
          visibilityTimeout: durationFromMs(1000),
          redrivePolicy: { deadLetterQueue: "dlq.fifo", maxReceiveCount: 1 },
        },
      });
      const sent = await h.rpc.send({ queue: "f", body: bytes("poison"), messageGroupId: "g", deduplicationId: "d" });
      await h.rpc.receive({ queue: "f" });
      clock.advance(1000);
      await h.settled();
      const [dead] = (await h.rpc.receive({ queue: "dlq.fifo" })).messages;
      expect(dead).toMatchObject({
        messageId: sent.messageId,
        messageGroupId: "g",
        deduplicationId: sent.messageId,
        deadLetterSourceQueue: "f",
      });
      expect(dead!.sequenceNumber).toMatch(sequenceNumberPattern);
    });
  });
});
