import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

describe("dead-letter queues over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "dlq" });
    await h.rpc.createQueue({
      name: "work",
      config: {
        visibilityTimeout: durationFromMs(1000),
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 2 },
        retryPolicy: { minBackoff: durationFromMs(500), maxBackoff: durationFromMs(800) },
      },
    });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("shows the policies and the dead-letter sources", async () => {
    const work = (await h.rpc.getQueue({ name: "work" })).queue!;
    expect(work.config!.redrivePolicy).toMatchObject({ deadLetterQueue: "dlq", maxReceiveCount: 2 });
    expect(work.config!.retryPolicy!.minBackoff).toMatchObject({ nanos: 500_000_000 });
    expect((await h.rpc.getQueue({ name: "dlq" })).queue!.deadLetterSourceQueues).toEqual(["work"]);
  });

  it("moves a message after its last delivery and marks it; redrive brings it back", async () => {
    const { messageId } = await h.rpc.send({ queue: "work", body: Buffer.from("poison") });
    await h.rpc.receive({ queue: "work" });
    clock.advance(1000 + 500); // lease, then the first backoff
    expect((await h.rpc.receive({ queue: "work" })).messages[0]!.receiveCount).toBe(2);
    clock.advance(1000);
    await h.settled();
    const [dead] = (await h.rpc.receive({ queue: "dlq" })).messages;
    expect(dead).toMatchObject({
      messageId,
      // Delivered twice in "work": the count goes on in the dead-letter queue.
      receiveCount: 3,
      deadLetterSourceQueue: "work",
      deadLetterReason: "MAX_RECEIVE_COUNT_EXCEEDED",
    });
    await h.rpc.changeVisibility({
      queue: "dlq",
      receiptHandle: dead!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    expect((await h.rpc.redriveMessages({ deadLetterQueue: "dlq" })).movedCount).toBe(1n);
    const [back] = (await h.rpc.receive({ queue: "work" })).messages;
    expect(back).toMatchObject({ messageId, receiveCount: 1, deadLetterSourceQueue: "", deadLetterReason: "" });
  });

  it("answers the dead-letter errors with their codes", async () => {
    await expectRpcError(
      h.rpc.createQueue({ name: "x", config: { redrivePolicy: { deadLetterQueue: "nope", maxReceiveCount: 1 } } }),
      status.FAILED_PRECONDITION,
      "DEAD_LETTER_QUEUE_NOT_FOUND",
      "config.redrive_policy.dead_letter_queue",
    );
    await expectRpcError(h.rpc.deleteQueue({ name: "dlq" }), status.FAILED_PRECONDITION, "QUEUE_IN_USE");
    await expectRpcError(
      h.rpc.createQueue({ name: "x", config: { retryPolicy: { minBackoff: { seconds: -1n, nanos: 0 } } } }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.retry_policy.min_backoff",
    );
    await expectRpcError(h.rpc.redriveMessages({ deadLetterQueue: "nope" }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
  });
});
