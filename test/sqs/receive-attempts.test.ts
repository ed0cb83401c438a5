/**
 * The SQS endpoint's memory of FIFO receives under their
 * ReceiveRequestAttemptId: what it keeps, for whom, for how long, and its
 * bounds. The endpoint's use of it is tested through the AWS SDK in
 * test/sqs/sdk-fifo-messages.test.ts.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ReceivedMessageSchema, type ReceivedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import {
  attemptWindowMs,
  checkAttemptId,
  ReceiveAttempts,
  type AttemptKey,
} from "../../src/sqs/actions/receive-attempts.js";
import { SqsError } from "../../src/sqs/sqs-error.js";
import { FakeClock } from "../support/fake-clock.js";

const key = (attemptId: string, caller = "ops", queue = "orders.fifo"): AttemptKey => ({ caller, queue, attemptId });
const fifoMessage = (body: string, bodyBytes = body.length): ReceivedMessage =>
  create(ReceivedMessageSchema, {
    messageId: body,
    receiptHandle: `handle-${body}`,
    body: new Uint8Array(bodyBytes),
    messageGroupId: "g",
  });
const answered = (...messages: ReceivedMessage[]) => Promise.resolve(messages);
// remember() learns what an answer held once it settles.
const settled = () => new Promise((resolve) => setImmediate(resolve));
const bodiesOf = async (answer: Promise<readonly ReceivedMessage[]> | undefined) =>
  (await answer)?.map((message) => message.messageId);

describe("ReceiveAttempts", () => {
  it("finds an attempt for the same caller, queue and id only, for five minutes", async () => {
    const clock = new FakeClock();
    const attempts = new ReceiveAttempts(clock);
    const attempt = attempts.remember(key("a"), answered(fifoMessage("m1")));
    await settled();
    expect(attempts.find(key("a"))).toBe(attempt);
    expect(await bodiesOf(attempts.find(key("a"))?.answer)).toEqual(["m1"]);
    expect(attempts.find(key("b"))).toBeUndefined();
    expect(attempts.find(key("a", "someone-else"))).toBeUndefined();
    expect(attempts.find(key("a", "ops", "other.fifo"))).toBeUndefined();
    clock.advance(attemptWindowMs - 1);
    expect(attempts.find(key("a"))).toBe(attempt);
    clock.advance(1);
    expect(attempts.find(key("a"))).toBeUndefined();
    expect(attempts.size).toBe(0);
  });

  it("shares a pending answer, and forgets answers that fail or are empty", async () => {
    const attempts = new ReceiveAttempts(new FakeClock());
    let resolve!: (messages: ReceivedMessage[]) => void;
    const pending = new Promise<ReceivedMessage[]>((settle) => (resolve = settle));
    attempts.remember(key("pending"), pending);
    expect(attempts.find(key("pending"))?.answer).toBe(pending);
    resolve([fifoMessage("m1")]);
    const failing = Promise.reject(new Error("storage down"));
    failing.catch(() => undefined);
    attempts.remember(key("failed"), failing);
    attempts.remember(key("empty"), answered());
    await settled();
    expect(await bodiesOf(attempts.find(key("pending"))?.answer)).toEqual(["m1"]);
    for (const id of ["failed", "empty"]) expect(attempts.find(key(id)), id).toBeUndefined();
  });

  it("keeps a copy of the answer with bodies of its own and no checkpoints", async () => {
    const attempts = new ReceiveAttempts(new FakeClock());
    // As a decoded answer gives them: bodies are views into one larger buffer.
    const wire = Buffer.from("first|second");
    const messages = [
      create(ReceivedMessageSchema, {
        messageId: "1",
        receiptHandle: "h1",
        messageGroupId: "g",
        body: wire.subarray(0, 5),
        checkpoint: Buffer.from("progress"),
      }),
      create(ReceivedMessageSchema, {
        messageId: "2",
        receiptHandle: "h2",
        messageGroupId: "g",
        body: wire.subarray(6),
      }),
    ];
    attempts.remember(key("a"), answered(...messages));
    await settled();
    const kept = (await attempts.find(key("a"))!.answer)!;
    expect(kept.map((message) => Buffer.from(message.body).toString())).toEqual(["first", "second"]);
    expect(kept.map((message) => message.body.buffer.byteLength)).toEqual([5, 6]);
    expect(kept[0]!.checkpoint).toBeUndefined();
  });

  it("drops an attempt only while it is still the attempt of its id", async () => {
    const attempts = new ReceiveAttempts(new FakeClock());
    const first = attempts.remember(key("a"), answered(fifoMessage("m1")));
    const second = attempts.remember(key("a"), answered(fifoMessage("m2")));
    // A retry that checked the first attempt does not forget the second, which a concurrent retry made.
    attempts.drop(key("a"), first);
    expect(attempts.find(key("a"))).toBe(second);
    expect(attempts.isCurrent(key("a"), first)).toBe(false);
    attempts.drop(key("a"), second);
    expect(attempts.find(key("a"))).toBeUndefined();
  });

  it("holds an answer's leases until the first runs out, as last renewed, and forgets it when one of its messages is settled", async () => {
    const clock = new FakeClock();
    const attempts = new ReceiveAttempts(clock);
    const leased = (body: string, forMs: number) => {
      const message = fifoMessage(body);
      message.leaseDeadline = timestampFromMs(clock.now() + forMs);
      return message;
    };
    const attempt = attempts.remember(key("a"), answered(leased("m1", 30_000), leased("m2", 10_000)));
    await settled();
    expect(attempt.leasesEndMs).toBe(clock.now() + 10_000);
    clock.advance(9_999);
    expect(attempts.leasesHeld(key("a"), attempt)).toBe(true);
    clock.advance(1);
    expect(attempts.leasesHeld(key("a"), attempt)).toBe(false);
    attempts.renewed(key("a"), attempt, clock.now() + 5_000);
    expect(attempts.leasesHeld(key("a"), attempt)).toBe(true);
    // A handle of another answer changes nothing; one of this answer forgets it.
    attempts.settled("handle-m3");
    expect(attempts.find(key("a"))).toBe(attempt);
    attempts.settled("handle-m2");
    expect(attempts.find(key("a"))).toBeUndefined();
    expect(attempts.leasesHeld(key("a"), attempt)).toBe(false);
  });

  it("forgets the oldest attempts beyond its count and byte limits", async () => {
    const attempts = new ReceiveAttempts(new FakeClock(), { maxAttempts: 3, maxBytes: 10_000 });
    for (const id of ["1", "2", "3", "4"]) attempts.remember(key(id), answered(fifoMessage(id)));
    await settled();
    const remembered = (...ids: string[]) => ids.map((id) => attempts.find(key(id)) !== undefined);
    expect(remembered("1", "2", "3", "4")).toEqual([false, true, true, true]);
    // A fourth attempt pushes "2" out by count; its 8,000 body bytes (and
    // overhead) then push "3" out by bytes.
    attempts.remember(key("big"), answered(fifoMessage("big", 6_000), fifoMessage("big2", 2_000)));
    await settled();
    expect(remembered("2", "3", "4", "big")).toEqual([false, false, true, true]);
    // An answer larger than the whole budget is not kept, and pushes nothing out.
    attempts.remember(key("huge"), answered(fifoMessage("huge", 20_000)));
    await settled();
    expect(remembered("4", "big", "huge")).toEqual([true, true, false]);
  });

  it("counts attributes in UTF-8 bytes", async () => {
    const attempts = new ReceiveAttempts(new FakeClock(), { maxAttempts: 10, maxBytes: 10_000 });
    attempts.remember(key("plain"), answered(fifoMessage("plain", 4_000)));
    const attributed = fifoMessage("attributed");
    // 6,000 bytes in UTF-8 (3,000 in UTF-16 units): with "plain", past the 10,000.
    attributed.attributes = { note: "é".repeat(3_000) };
    attempts.remember(key("attributed"), answered(attributed));
    await settled();
    expect([attempts.find(key("plain")), attempts.find(key("attributed"))].map((found) => found !== undefined)).toEqual(
      [false, true],
    );
  });
});

describe("checkAttemptId", () => {
  it("takes 1 to 128 alphanumeric or punctuation characters, and refuses anything else as InvalidParameterValue", () => {
    for (const id of ["a", "x".repeat(128), "retry-1_!#$%&'()*+,./:;<=>?@[\\]^`{|}~"])
      expect(checkAttemptId(id)).toBe(id);
    for (const id of ["", "x".repeat(129), "has space", "tab\t", "é"]) {
      expect(() => checkAttemptId(id), JSON.stringify(id)).toThrow(
        expect.objectContaining({
          constructor: SqsError,
          legacyCode: "InvalidParameterValue",
          message: expect.stringMatching(/ReceiveRequestAttemptId/),
        }),
      );
    }
  });
});
