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
import { attemptWindowMs, checkAttemptId, ReceiveAttempts, type AttemptKey } from "../../src/sqs/actions/receive-attempts.js";
import { SqsError } from "../../src/sqs/sqs-error.js";
import { FakeClock } from "../support/fake-clock.js";

const key = (attemptId: string, caller = "ops", queue = "orders.fifo"): AttemptKey => ({ caller, queue, attemptId });
const fifoMessage = (body: string, bodyBytes = body.length): ReceivedMessage =>
  create(ReceivedMessageSchema, { messageId: body, receiptHandle: `handle-${body}`, body: new Uint8Array(bodyBytes), messageGroupId: "g" });
const answered = (...messages: ReceivedMessage[]) => Promise.resolve(messages);
// remember() learns what an answer held once it settles.
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("ReceiveAttempts", () => {
  it("finds an attempt's answer for the same caller, queue and id only, for five minutes", async () => {
    const clock = new FakeClock();
    const attempts = new ReceiveAttempts(clock);
    const answer = answered(fifoMessage("m1"));
    attempts.remember(key("a"), answer);
    await settled();
    expect(attempts.find(key("a"))).toBe(answer);
    expect(attempts.find(key("b"))).toBeUndefined();
    expect(attempts.find(key("a", "someone-else"))).toBeUndefined();
    expect(attempts.find(key("a", "ops", "other.fifo"))).toBeUndefined();
    clock.advance(attemptWindowMs - 1);
    expect(attempts.find(key("a"))).toBe(answer);
    clock.advance(1);
    expect(attempts.find(key("a"))).toBeUndefined();
    expect(attempts.size).toBe(0);
  });

  it("shares a pending answer, and forgets answers that fail, are empty or hold no FIFO message", async () => {
    const attempts = new ReceiveAttempts(new FakeClock());
    let resolve!: (messages: ReceivedMessage[]) => void;
    const pending = new Promise<ReceivedMessage[]>((settle) => (resolve = settle));
    attempts.remember(key("pending"), pending);
    expect(attempts.find(key("pending"))).toBe(pending);
    resolve([fifoMessage("m1")]);
    const failing = Promise.reject(new Error("storage down"));
    failing.catch(() => undefined);
    attempts.remember(key("failed"), failing);
    attempts.remember(key("empty"), answered());
    attempts.remember(key("standard"), answered(create(ReceivedMessageSchema, { messageId: "s", receiptHandle: "h" })));
    await settled();
    expect(attempts.find(key("pending"))).toBe(pending);
    for (const id of ["failed", "empty", "standard"]) expect(attempts.find(key(id)), id).toBeUndefined();
  });

  it("drops an attempt only while it still holds the answer the caller checked", async () => {
    const attempts = new ReceiveAttempts(new FakeClock());
    const first = answered(fifoMessage("m1"));
    attempts.remember(key("a"), first);
    const second = answered(fifoMessage("m2"));
    attempts.remember(key("a"), second);
    // A retry that checked the first answer does not forget the second, which a concurrent retry made.
    attempts.drop(key("a"), first);
    expect(attempts.find(key("a"))).toBe(second);
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
    const answer = answered(leased("m1", 30_000), leased("m2", 10_000));
    attempts.remember(key("a"), answer);
    await settled();
    clock.advance(9_999);
    expect(attempts.leasesHeld(key("a"), answer)).toBe(true);
    clock.advance(1);
    expect(attempts.leasesHeld(key("a"), answer)).toBe(false);
    attempts.renewed(key("a"), answer, clock.now() + 5_000);
    expect(attempts.leasesHeld(key("a"), answer)).toBe(true);
    // A handle of another answer changes nothing; one of this answer forgets it.
    attempts.settling("handle-m3");
    expect(attempts.find(key("a"))).toBe(answer);
    attempts.settling("handle-m2");
    expect(attempts.find(key("a"))).toBeUndefined();
    expect(attempts.leasesHeld(key("a"), answer)).toBe(false);
  });

  it("forgets the oldest attempts beyond its count and byte limits", async () => {
    const attempts = new ReceiveAttempts(new FakeClock(), { maxAttempts: 3, maxBytes: 10_000 });
    for (const id of ["1", "2", "3", "4"]) attempts.remember(key(id), answered(fifoMessage(id)));
    await settled();
    expect(["1", "2", "3", "4"].map((id) => attempts.find(key(id)) !== undefined)).toEqual([false, true, true, true]);
    // A fourth attempt pushes "2" out by count; its 8,000 body bytes (and
    // overhead) then push "3" out by bytes.
    attempts.remember(key("big"), answered(fifoMessage("big", 6_000), fifoMessage("big2", 2_000)));
    await settled();
    expect(["2", "3", "4", "big"].map((id) => attempts.find(key(id)) !== undefined)).toEqual([false, false, true, true]);
    // An answer larger than the whole budget is not kept, and pushes nothing out.
    attempts.remember(key("huge"), answered(fifoMessage("huge", 20_000)));
    await settled();
    expect(["4", "big", "huge"].map((id) => attempts.find(key(id)) !== undefined)).toEqual([true, true, false]);
  });
});

describe("checkAttemptId", () => {
  it("takes 1 to 128 alphanumeric or punctuation characters, and refuses anything else as InvalidParameterValue", () => {
    for (const id of ["a", "x".repeat(128), "retry-1_!#$%&'()*+,./:;<=>?@[\\]^`{|}~"]) expect(checkAttemptId(id)).toBe(id);
    for (const id of ["", "x".repeat(129), "has space", "tab\t", "é"]) {
      expect(() => checkAttemptId(id), JSON.stringify(id)).toThrow(
        expect.objectContaining({ constructor: SqsError, legacyCode: "InvalidParameterValue", message: expect.stringMatching(/ReceiveRequestAttemptId/) }),
      );
    }
  });
});
