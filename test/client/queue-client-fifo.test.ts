// The QueueClient's FIFO options and results against a real server: queue
// settings in and out, message groups and deduplication ids on send,
// sequence numbers back, FIFO fields on deliveries and peeks, and a standard
// queue's results exactly as they were before FIFO queues.
import { createHash } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";

const sequenceNumberPattern = /^\d{20}$/;

describe("QueueClient on FIFO queues", () => {
  let h: GrpcHarness;
  let client: QueueClient;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    client = new QueueClient(h.server.address);
  });
  afterEach(async () => {
    client.close();
    await h.stop();
  });

  it("creates FIFO queues with their settings, reports them, and keeps them through an update of the whole config", async () => {
    const created = await client.createQueue("orders.fifo", {
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
    });
    expect(created.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
    });
    // Defaults filled in: the queue scope.
    expect((await client.createQueue("plain.fifo", { fifo: true })).config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: false,
      deduplicationScope: "queue",
    });
    // The reported config goes back as it came: a read-modify-write keeps the queue FIFO.
    const updated = await client.updateQueue("orders.fifo", { ...created.config, maxInFlight: 9 });
    expect(updated.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: "messageGroup",
      maxInFlight: 9,
    });
    await expectRpcError(
      client.updateQueue("orders.fifo", { maxInFlight: 9 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.fifo",
    );
    // A standard queue's config carries no FIFO fields at all.
    const standard = await client.createQueue("standard");
    expect(Object.keys(standard.config)).not.toContain("fifo");
    expect(standard.config.deduplicationScope).toBeUndefined();
  });

  it("refuses an unknown deduplication scope before sending anything", async () => {
    const scope = "message-group" as unknown as "queue";
    await expect(client.createQueue("f", { fifo: true, deduplicationScope: scope })).rejects.toThrow(RangeError);
    await expectRpcError(client.getQueue("f"), status.NOT_FOUND, "QUEUE_NOT_FOUND");
  });

  it("sends with a group and deduplication id, and returns sequence numbers; a duplicate returns the first send's", async () => {
    await client.createQueue("f", { fifo: true });
    const first = await client.sendWithResult("f", "a", { messageGroupId: "g", deduplicationId: "1" });
    expect(first.sequenceNumber).toMatch(sequenceNumberPattern);
    const batch = await client.sendBatchWithResults("f", [
      { body: "b", messageGroupId: "g", deduplicationId: "2" },
      { body: "c", messageGroupId: "h", deduplicationId: "3" },
      { body: "a again", messageGroupId: "g", deduplicationId: "1" },
    ]);
    expect(batch[2]).toEqual(first);
    const numbers = [first, ...batch.slice(0, 2)].map((result) => result.sequenceNumber!);
    expect([...numbers].sort()).toEqual(numbers);
    expect(new Set(numbers).size).toBe(3);
    // send and sendBatch still answer with ids alone.
    expect(await client.send("f", "dup", { messageGroupId: "x", deduplicationId: "2" })).toBe(batch[0]!.messageId);
    expect(await client.sendBatch("f", [{ body: "dup", messageGroupId: "x", deduplicationId: "3" }])).toEqual([
      batch[1]!.messageId,
    ]);
    expect((await client.getQueue("f")).stats.visible).toBe(3);
  });

  it("answers a standard queue's sends without sequence numbers", async () => {
    await client.createQueue("s");
    const single = await client.sendWithResult("s", "x");
    expect(single).toEqual({ messageId: single.messageId });
    const batch = await client.sendBatchWithResults("s", [{ body: "y" }, { body: "z" }]);
    expect(batch.map((result) => Object.keys(result))).toEqual([["messageId"], ["messageId"]]);
  });

  it("fails sends with the FIFO reasons and their fields", async () => {
    await client.createQueue("f", { fifo: true });
    await client.createQueue("s");
    await expectRpcError(
      client.send("f", "x", { deduplicationId: "d" }),
      status.INVALID_ARGUMENT,
      "MESSAGE_GROUP_ID_REQUIRED",
      "message_group_id",
    );
    await expectRpcError(
      client.send("f", "x", { messageGroupId: "g" }),
      status.INVALID_ARGUMENT,
      "DEDUPLICATION_ID_REQUIRED",
      "deduplication_id",
    );
    await expectRpcError(
      client.send("f", "x", { messageGroupId: "g", deduplicationId: "d", delayMs: 1000 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "delay",
    );
    await expectRpcError(
      client.send("s", "x", { messageGroupId: "g" }),
      status.INVALID_ARGUMENT,
      "NOT_A_FIFO_QUEUE",
      "message_group_id",
    );
    await expectRpcError(
      client.sendBatch("f", [
        { body: "ok", messageGroupId: "g", deduplicationId: "1" },
        { body: "x", deduplicationId: "2" },
      ]),
      status.INVALID_ARGUMENT,
      "MESSAGE_GROUP_ID_REQUIRED",
      "entries[1].message_group_id",
    );
  });

  it("shows group, sequence number and deduplication id on deliveries and peeks; none on a standard queue's", async () => {
    await client.createQueue("f", { fifo: true, contentBasedDeduplication: true });
    const sent = await client.sendWithResult("f", "hello", { messageGroupId: "customer-1" });
    const fifoFields = {
      messageGroupId: "customer-1",
      sequenceNumber: sent.sequenceNumber,
      deduplicationId: createHash("sha256").update("hello").digest("hex"),
    };
    expect((await client.peekMessages("f")).messages[0]).toMatchObject({ messageId: sent.messageId, ...fifoFields });
    const [delivery] = await client.receive("f");
    expect(delivery).toMatchObject({ messageId: sent.messageId, ...fifoFields });
    expect(text(delivery!)).toBe("hello");

    await client.createQueue("s");
    await client.send("s", "plain");
    const [peeked] = (await client.peekMessages("s")).messages;
    const [received] = await client.receive("s");
    for (const message of [peeked!, received!]) {
      expect(Object.keys(message)).not.toContain("messageGroupId");
      expect(Object.keys(message)).not.toContain("sequenceNumber");
      expect(Object.keys(message)).not.toContain("deduplicationId");
    }
  });
});
