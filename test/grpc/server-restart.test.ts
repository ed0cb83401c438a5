import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

describe("restarting the server on the same data directory", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("brings back visible, in-flight and delayed messages where they were", async () => {
    await h.rpc.createQueue({ name: "keep", config: { visibilityTimeout: durationFromMs(60_000), maxInFlight: 50 } });
    const { messageIds } = await h.rpc.sendBatch({
      queue: "keep",
      entries: [
        { body: Buffer.from("leased") },
        { body: Buffer.from("visible"), attributes: { a: "1" } },
        { body: Buffer.from("delayed"), delay: durationFromMs(120_000) },
      ],
    });
    const [leased] = (await h.rpc.receive({ queue: "keep" })).messages;
    expect(leased!.messageId).toBe(messageIds[0]);

    await h.restart();

    const queue = (await h.rpc.getQueue({ name: "keep" })).queue!;
    expect(queue.config!.maxInFlight).toBe(50);
    expect(queue.stats).toMatchObject({ visible: 1n, inFlight: 1n, delayed: 1n });
    // The visible one is as it was; the leased one is not redelivered early.
    const { messages } = await h.rpc.receive({ queue: "keep", maxMessages: 10 });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ messageId: messageIds[1], receiveCount: 1, attributes: { a: "1" } });
    expect(Buffer.from(messages[0]!.body).toString()).toBe("visible");
    await h.rpc.delete({ queue: "keep", receiptHandle: messages[0]!.receiptHandle });
    // The lease keeps its deadline and its receipt handle.
    clock.advance(59_000);
    expect(
      (await h.rpc.receive({ queue: "keep", maxMessages: 10, visibilityTimeout: durationFromMs(1) })).messages,
    ).toEqual([]);
    await h.rpc.changeVisibility({
      queue: "keep",
      receiptHandle: leased!.receiptHandle,
      visibilityTimeout: durationFromMs(10_000),
    });
    await h.rpc.delete({ queue: "keep", receiptHandle: leased!.receiptHandle });
    // The delayed one appears at its ready time.
    clock.advance(61_000);
    const [delayed] = (await h.rpc.receive({ queue: "keep" })).messages;
    expect(delayed!.messageId).toBe(messageIds[2]);
  });

  it("keeps handles fenced across a restart", async () => {
    await h.rpc.createQueue({ name: "fence", config: { visibilityTimeout: durationFromMs(1000) } });
    await h.rpc.send({ queue: "fence", body: Buffer.from("x") });
    const [first] = (await h.rpc.receive({ queue: "fence" })).messages;
    clock.advance(1000);
    const [second] = (await h.rpc.receive({ queue: "fence" })).messages;
    await h.restart();
    await expectRpcError(
      h.rpc.delete({ queue: "fence", receiptHandle: first!.receiptHandle }),
      status.FAILED_PRECONDITION,
      "LEASE_SUPERSEDED",
    );
    await h.rpc.delete({ queue: "fence", receiptHandle: second!.receiptHandle });
    expect((await h.rpc.getQueue({ name: "fence" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("keeps purged and deleted queues empty", async () => {
    await h.rpc.createQueue({ name: "purged" });
    await h.rpc.createQueue({ name: "gone" });
    await h.rpc.sendBatch({ queue: "purged", entries: [{ body: Buffer.from("1") }, { body: Buffer.from("2") }] });
    await h.rpc.send({ queue: "gone", body: Buffer.from("x") });
    await h.rpc.purgeQueue({ name: "purged" });
    await h.rpc.deleteQueue({ name: "gone" });
    await h.rpc.createQueue({ name: "gone" });
    await h.restart();
    expect((await h.rpc.getQueue({ name: "purged" })).queue!.stats!.visible).toBe(0n);
    expect((await h.rpc.getQueue({ name: "gone" })).queue!.stats!.visible).toBe(0n);
  });
});
