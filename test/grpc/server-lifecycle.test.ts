import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

describe("message lifecycle over gRPC", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  it("sends, receives, and deletes a message", async () => {
    await h.rpc.createQueue({ name: "jobs" });
    const { messageId } = await h.rpc.send({ queue: "jobs", body: Buffer.from("hello"), attributes: { a: "b" } });
    const { messages } = await h.rpc.receive({ queue: "jobs" });
    expect(messages).toHaveLength(1);
    expect(messages[0]!.messageId).toBe(messageId);
    expect(Buffer.from(messages[0]!.body).toString()).toBe("hello");
    expect(messages[0]!.attributes).toEqual({ a: "b" });
    expect(messages[0]!.receiveCount).toBe(1);
    await h.rpc.delete({ queue: "jobs", receiptHandle: messages[0]!.receiptHandle });
    const { queue } = await h.rpc.getQueue({ name: "jobs" });
    expect(queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n, delayed: 0n });
  });
});
