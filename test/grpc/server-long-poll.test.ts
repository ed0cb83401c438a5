import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { sleep } from "../support/wait.js";

// Long polls are about real waiting, so these tests use the real clock. Each
// waits far longer (5 s) than the event it expects takes to arrive, and
// asserts that the answer came well before the wait ran out.
const longWait = durationFromMs(5000);
const earlyMs = 3000;

describe("long polling", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "poll" });
  });
  afterEach(async () => {
    await h.stop();
  });

  async function timed<T>(call: Promise<T>): Promise<{ result: T; ms: number }> {
    const start = performance.now();
    const result = await call;
    return { result, ms: performance.now() - start };
  }

  it("returns as soon as a message is sent", async () => {
    const poll = timed(h.rpc.receive({ queue: "poll", waitTime: longWait }));
    await sleep(100);
    const { messageId } = await h.rpc.send({ queue: "poll", body: Buffer.from("x") });
    const { result, ms } = await poll;
    expect(result.messages.map((m) => m.messageId)).toEqual([messageId]);
    expect(ms).toBeLessThan(earlyMs);
  });

  it("returns when a lease expires", async () => {
    await h.rpc.send({ queue: "poll", body: Buffer.from("x") });
    const [leased] = (await h.rpc.receive({ queue: "poll", visibilityTimeout: durationFromMs(300) })).messages;
    const { result, ms } = await timed(h.rpc.receive({ queue: "poll", waitTime: longWait }));
    expect(result.messages[0]!.messageId).toBe(leased!.messageId);
    expect(result.messages[0]!.receiveCount).toBe(2);
    expect(ms).toBeLessThan(earlyMs);
  });

  it("returns when a message is released", async () => {
    await h.rpc.send({ queue: "poll", body: Buffer.from("x") });
    const [leased] = (await h.rpc.receive({ queue: "poll" })).messages;
    const poll = timed(h.rpc.receive({ queue: "poll", waitTime: longWait }));
    await sleep(100);
    await h.rpc.changeVisibility({
      queue: "poll",
      receiptHandle: leased!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    const { result, ms } = await poll;
    expect(result.messages[0]!.messageId).toBe(leased!.messageId);
    expect(ms).toBeLessThan(earlyMs);
  });

  it("returns empty when the wait ends", async () => {
    const { result, ms } = await timed(h.rpc.receive({ queue: "poll", waitTime: durationFromMs(300) }));
    expect(result.messages).toEqual([]);
    expect(ms).toBeGreaterThanOrEqual(250);
  });

  it("never gives one message to two concurrent polls", async () => {
    const polls = Array.from({ length: 6 }, () =>
      h.rpc.receive({ queue: "poll", maxMessages: 2, waitTime: durationFromMs(1500) }),
    );
    await sleep(100);
    const sent = await h.rpc.sendBatch({
      queue: "poll",
      entries: Array.from({ length: 4 }, (_, i) => ({ body: Buffer.from(String(i)) })),
    });
    const delivered = (await Promise.all(polls)).flatMap((r) => r.messages.map((m) => m.messageId));
    expect([...delivered].sort()).toEqual([...sent.messageIds].sort());
  });

  it("a poll whose caller gave up takes nothing", async () => {
    await expectRpcError(
      h.rpc.receive({ queue: "poll", waitTime: longWait }, { deadline: Date.now() + 200 }),
      status.DEADLINE_EXCEEDED,
      "",
    );
    await h.rpc.send({ queue: "poll", body: Buffer.from("x") });
    const { messages } = await h.rpc.receive({ queue: "poll" });
    expect(messages[0]!.receiveCount).toBe(1);
  });

  it("a deleted queue ends its waiting polls with QUEUE_NOT_FOUND", async () => {
    // Checked from the start, so the failure is never an unhandled rejection.
    const poll = expectRpcError(
      h.rpc.receive({ queue: "poll", waitTime: longWait }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await sleep(100);
    await h.rpc.deleteQueue({ name: "poll" });
    await poll;
  });

  it("a long poll at the in-flight limit waits for room", async () => {
    await h.rpc.createQueue({ name: "narrow", config: { maxInFlight: 1 } });
    await h.rpc.sendBatch({ queue: "narrow", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
    const [first] = (await h.rpc.receive({ queue: "narrow" })).messages;
    const poll = timed(h.rpc.receive({ queue: "narrow", waitTime: longWait }));
    await sleep(100);
    await h.rpc.delete({ queue: "narrow", receiptHandle: first!.receiptHandle });
    const { result, ms } = await poll;
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]!.messageId).not.toBe(first!.messageId);
    expect(ms).toBeLessThan(earlyMs);
  });
});
