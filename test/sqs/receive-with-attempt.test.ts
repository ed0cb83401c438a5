/**
 * The interleavings of retried receives under one ReceiveRequestAttemptId
 * that a real broker does not produce on demand: the broker's answers are
 * scripted here, so the test decides which call finishes first. The same
 * rules against a real broker, through the AWS SDK, are in
 * test/sqs/sdk-fifo-messages.test.ts.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  EntryResultSchema,
  ReceivedMessageSchema,
  type EntryResult,
  type ReceivedMessage,
} from "../../gen/holdshelf/v1/message_pb.js";
import type { SqsActionContext } from "../../src/sqs/actions/action-context.js";
import { receiveWithAttempt, type ReceiveCall } from "../../src/sqs/actions/receive-with-attempt.js";
import { ReceiveAttempts } from "../../src/sqs/actions/receive-attempts.js";
import { FakeClock } from "../support/fake-clock.js";

/** A broker call the test answers when it chooses. */
interface PendingCall {
  readonly method: string;
  answer(value: unknown): void;
}

/** An action context whose broker calls wait for the test to answer them. */
function scriptedContext(clock: FakeClock) {
  const calls: PendingCall[] = [];
  const queues = {
    call: (method: string) => new Promise((resolve) => calls.push({ method, answer: resolve })),
  };
  const context = { queues, receiveAttempts: new ReceiveAttempts(clock) } as unknown as SqsActionContext;
  /** Waits until a call of `method` is made, and takes it from the list. */
  const next = async (method: string): Promise<PendingCall> => {
    for (let turns = 0; turns < 100; turns++) {
      const index = calls.findIndex((call) => call.method === method);
      if (index !== -1) return calls.splice(index, 1)[0]!;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`no ${method} call; made: ${calls.map((call) => call.method).join(", ") || "none"}`);
  };
  return { context, calls, next };
}

const key = { caller: "", queue: "orders.fifo", attemptId: "attempt-1" };
const call: ReceiveCall = { queue: "orders.fifo", maxMessages: 10, visibilityTimeout: durationFromMs(30_000) };

describe("receiveWithAttempt", () => {
  it("gives two retries that both find their attempt changed one new receive, which they share", async () => {
    const clock = new FakeClock();
    const { context, calls, next } = scriptedContext(clock);
    const leased = (id: string): ReceivedMessage =>
      create(ReceivedMessageSchema, {
        messageId: id,
        receiptHandle: `handle-${id}`,
        messageGroupId: "g",
        leaseDeadline: timestampFromMs(clock.now() + 30_000),
      });
    const renewal = (code: number, reason = ""): { results: EntryResult[] } => ({
      results: [
        create(EntryResultSchema, {
          code,
          reason,
          ...(code === 0 ? { leaseDeadline: timestampFromMs(clock.now() + 30_000) } : {}),
        }),
      ],
    });

    const first = receiveWithAttempt(context, key, call);
    (await next("receive")).answer({ messages: [leased("m1")] });
    expect((await first).map((message) => message.messageId)).toEqual(["m1"]);

    // m1 is deleted where the endpoint does not see it; two retries come at once.
    const retries = [receiveWithAttempt(context, key, call), receiveWithAttempt(context, key, call)];
    const [renewalOne, renewalTwo] = [await next("changeVisibilityBatch"), await next("changeVisibilityBatch")];
    renewalOne.answer(renewal(5, "MESSAGE_NOT_FOUND"));
    const newReceive = await next("receive");
    // The second finds the first's new receive in place of the attempt it checked, and waits for it.
    renewalTwo.answer(renewal(5, "MESSAGE_NOT_FOUND"));
    newReceive.answer({ messages: [leased("m2")] });
    // Sharing it, the second renews its lease like any retry.
    (await next("changeVisibilityBatch")).answer(renewal(0));
    const answers = await Promise.all(retries);
    expect(answers.map((messages) => messages.map((message) => message.messageId))).toEqual([["m2"], ["m2"]]);
    expect(calls).toEqual([]);
  });

  it("answers a retry that shared a long poll ending empty with that empty answer, and one that shared a failure with a receive of its own", async () => {
    const { context, calls, next } = scriptedContext(new FakeClock());
    const [first, retry] = [receiveWithAttempt(context, key, call), receiveWithAttempt(context, key, call)];
    (await next("receive")).answer({ messages: [] });
    expect(await Promise.all([first, retry])).toEqual([[], []]);
    expect(calls).toEqual([]);

    // A receive that fails (as the broker's answer rejecting) leaves its sharer to receive anew.
    let fail!: (error: Error) => void;
    const failing = receiveWithAttempt(
      {
        ...context,
        queues: { call: () => new Promise((_, reject) => (fail = reject)) },
      } as unknown as SqsActionContext,
      key,
      call,
    );
    const sharer = receiveWithAttempt(context, key, call);
    fail(new Error("storage down"));
    await expect(failing).rejects.toThrow("storage down");
    const own = await next("receive");
    own.answer({
      messages: [create(ReceivedMessageSchema, { messageId: "m1", receiptHandle: "h1", messageGroupId: "g" })],
    });
    expect((await sharer).map((message) => message.messageId)).toEqual(["m1"]);
  });

  it("repeats an answer whose renewal is refused only by max_lease_duration, until its leases run out", async () => {
    const clock = new FakeClock();
    const { context, next } = scriptedContext(clock);
    const deadline = clock.now() + 30_000;
    const first = receiveWithAttempt(context, key, call);
    (await next("receive")).answer({
      messages: [
        create(ReceivedMessageSchema, {
          messageId: "m1",
          receiptHandle: "h1",
          messageGroupId: "g",
          leaseDeadline: timestampFromMs(deadline),
        }),
      ],
    });
    await first;
    const capped = { results: [create(EntryResultSchema, { code: 9, reason: "LEASE_LIMIT_EXCEEDED" })] };
    clock.advance(10_000);
    const retry = receiveWithAttempt(context, key, call);
    (await next("changeVisibilityBatch")).answer(capped);
    expect((await retry).map((message) => message.messageId)).toEqual(["m1"]);
    // Held until the old deadline, not renewed: past it, a retry is a new receive.
    clock.advance(20_000);
    const late = receiveWithAttempt(context, key, call);
    (await next("receive")).answer({ messages: [] });
    expect(await late).toEqual([]);
  });
});
