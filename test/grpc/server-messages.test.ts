import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";

describe("QueueService RPCs against a real server", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "work", config: { visibilityTimeout: durationFromMs(10_000) } });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("manages queues: create, get, list with paging, update, purge, delete", async () => {
    const created = (await h.rpc.createQueue({ name: "a-1", config: { maxInFlight: 7 } })).queue!;
    expect(created.config!.maxInFlight).toBe(7);
    expect(created.config!.visibilityTimeout).toMatchObject({ seconds: 30n });
    // Same config again returns the same queue.
    expect((await h.rpc.createQueue({ name: "a-1", config: { maxInFlight: 7 } })).queue!.createTime).toEqual(
      created.createTime,
    );
    await h.rpc.createQueue({ name: "a-2" });
    await h.rpc.createQueue({ name: "b-1" });
    const first = await h.rpc.listQueues({ prefix: "a-", pageSize: 1 });
    expect(first.queues.map((q) => q.name)).toEqual(["a-1"]);
    const second = await h.rpc.listQueues({ prefix: "a-", pageSize: 1, pageToken: first.nextPageToken });
    expect(second.queues.map((q) => q.name)).toEqual(["a-2"]);
    expect(second.nextPageToken).toBe("");
    expect((await h.rpc.listQueues({})).queues.map((q) => q.name)).toEqual(["a-1", "a-2", "b-1", "work"]);

    const updated = (await h.rpc.updateQueue({ name: "a-1", config: { delay: durationFromMs(5000) } })).queue!;
    expect(updated.config!.delay).toMatchObject({ seconds: 5n });
    expect(updated.config!.maxInFlight).toBe(120000); // the whole config was replaced

    await h.rpc.sendBatch({ queue: "a-1", entries: [{ body: Buffer.from("1") }, { body: Buffer.from("2") }] });
    expect((await h.rpc.getQueue({ name: "a-1" })).queue!.stats!.delayed).toBe(2n);
    expect((await h.rpc.purgeQueue({ name: "a-1" })).purgedCount).toBe(2n);
    expect((await h.rpc.getQueue({ name: "a-1" })).queue!.stats).toMatchObject({ visible: 0n, delayed: 0n });

    await h.rpc.deleteQueue({ name: "a-1" });
    await expectRpcError(h.rpc.getQueue({ name: "a-1" }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
  });

  it("receives in ready-time order with counts, times and fresh handles per delivery", async () => {
    const sendTime = clock.now();
    const { messageIds } = await h.rpc.sendBatch({
      queue: "work",
      entries: [
        { body: Buffer.from("late"), delay: durationFromMs(2000) },
        { body: Buffer.from("first") },
        { body: Buffer.from("second"), attributes: { k: "v" } },
      ],
    });
    expect(messageIds).toHaveLength(3);
    const stats = (await h.rpc.getQueue({ name: "work" })).queue!.stats!;
    expect(stats).toMatchObject({ visible: 2n, inFlight: 0n, delayed: 1n });

    const firstRound = (await h.rpc.receive({ queue: "work", maxMessages: 10 })).messages;
    expect(firstRound.map((m) => text(m.body))).toEqual(["first", "second"]);
    expect(firstRound.map((m) => m.messageId)).toEqual(messageIds.slice(1));
    expect(firstRound[1]!.attributes).toEqual({ k: "v" });
    expect(timestampMs(firstRound[0]!.sendTime!)).toBe(sendTime);
    expect(timestampMs(firstRound[0]!.leaseDeadline!)).toBe(clock.now() + 10_000);

    clock.advance(2000);
    expect((await h.rpc.receive({ queue: "work", maxMessages: 10 })).messages.map((m) => text(m.body))).toEqual([
      "late",
    ]);

    // The leases of the first round run out: both come back, receive_count 2, new handles.
    clock.advance(10_000);
    const secondRound = (await h.rpc.receive({ queue: "work", maxMessages: 2 })).messages;
    expect(secondRound.map((m) => m.receiveCount)).toEqual([2, 2]);
    expect(secondRound[0]!.receiptHandle).not.toBe(firstRound[0]!.receiptHandle);
    expect(secondRound[0]!.firstReceiveTime).toEqual(firstRound[0]!.firstReceiveTime);
  });

  it("DeleteBatch reports each handle in order, deleting the valid ones", async () => {
    await h.rpc.sendBatch({ queue: "work", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
    const [a, b] = (await h.rpc.receive({ queue: "work", maxMessages: 2 })).messages;
    const { results } = await h.rpc.deleteBatch({
      queue: "work",
      receiptHandles: [a!.receiptHandle, "forged", b!.receiptHandle],
    });
    expect(results.map((r) => [r.receiptHandle, r.code, r.reason])).toEqual([
      [a!.receiptHandle, 0, ""],
      ["forged", status.INVALID_ARGUMENT, "RECEIPT_HANDLE_INVALID"],
      [b!.receiptHandle, 0, ""],
    ]);
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("ChangeVisibility extends, releases, and the batch reports each handle", async () => {
    await h.rpc.sendBatch({ queue: "work", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
    const [a, b] = (await h.rpc.receive({ queue: "work", maxMessages: 2 })).messages;
    const { leaseDeadline } = await h.rpc.changeVisibility({
      queue: "work",
      receiptHandle: a!.receiptHandle,
      visibilityTimeout: durationFromMs(60_000),
    });
    expect(timestampMs(leaseDeadline!)).toBe(clock.now() + 60_000);
    clock.advance(30_000);
    // b's lease ran out; a's was extended.
    expect((await h.rpc.receive({ queue: "work", maxMessages: 10 })).messages.map((m) => m.messageId)).toEqual([
      b!.messageId,
    ]);
    const { results } = await h.rpc.changeVisibilityBatch({
      queue: "work",
      receiptHandles: [a!.receiptHandle, b!.receiptHandle],
      visibilityTimeout: durationFromMs(0),
    });
    expect(results.map((r) => r.reason)).toEqual(["", "LEASE_SUPERSEDED"]);
    expect(timestampMs(results[0]!.leaseDeadline!)).toBe(clock.now());
    // Released at once.
    expect((await h.rpc.receive({ queue: "work" })).messages[0]!.messageId).toBe(a!.messageId);
  });

  it("keeps a Receive response under 4 MiB by returning fewer messages", async () => {
    await h.rpc.createQueue({ name: "big", config: { maxMessageBytes: 1024 * 1024 } });
    for (let i = 0; i < 5; i++) await h.rpc.send({ queue: "big", body: Buffer.alloc(1024 * 1024 - 100, i) });
    // A client with gRPC's default 4 MiB receive limit must be able to read the answer.
    const strict = createQueueServiceRpc(h.server.address, {
      channelOptions: { "grpc.max_receive_message_length": 4 * 1024 * 1024 },
    });
    try {
      const { messages } = await strict.receive({ queue: "big", maxMessages: 10 });
      expect(messages.length).toBeGreaterThan(0);
      expect(messages.length).toBeLessThan(5);
    } finally {
      strict.close();
    }
  });
});
