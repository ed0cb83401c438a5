import { describe, expect, it } from "vitest";
import { DEAD_LETTERS, JOBS, TASKS } from "./crash-queues.js";
import { checkInvariants } from "./invariants.js";
import { Ledger, type DeliveryRecord, type LeaseOpRecord } from "./ledger.js";

// The crash harness is only as good as its checks: each promise is broken
// here on purpose, in a ledger written by hand, and must be caught.

function send(ledger: Ledger, uid: string, messageId: string, queue: string = TASKS): void {
  ledger.sends.push({ uid, queue, start: 0, end: 10, outcome: "ok", messageId, wire: "grpc" });
}

function deliver(
  ledger: Ledger,
  d: Partial<DeliveryRecord> & Pick<DeliveryRecord, "messageId" | "uid" | "handle" | "start">,
): DeliveryRecord {
  const delivery: DeliveryRecord = {
    queue: TASKS,
    end: d.start + 10,
    visibilityMs: 1000,
    receiveCount: 1,
    drain: false,
    wire: "grpc",
    ...d,
  };
  ledger.deliveries.push(delivery);
  return delivery;
}

function op(ledger: Ledger, handle: string, o: Partial<LeaseOpRecord> & Pick<LeaseOpRecord, "kind" | "start">): void {
  ledger.leaseOp(handle, { visibilityMs: 0, end: o.start + 10, outcome: "ok", reason: "", wire: "grpc", ...o });
}

describe("the crash harness's invariant checks", () => {
  it("pass a clean history: received, extended, deleted", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100 });
    op(ledger, "h1", { kind: "change", visibilityMs: 2000, start: 500 });
    op(ledger, "h1", { kind: "delete", start: 1500 });
    expect(checkInvariants(ledger).violations).toEqual([]);
  });

  it("catch an acknowledged send that was never delivered, and one neither deleted nor drained", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    send(ledger, "u2", "m2");
    deliver(ledger, { messageId: "m2", uid: "u2", handle: "h2", start: 100 });
    const { violations } = checkInvariants(ledger);
    expect(violations).toEqual([
      expect.stringMatching(/^m1 .*never delivered/),
      expect.stringMatching(/^m2 .*drain did not find it/),
    ]);
  });

  it("catch a message stored twice: in two queues, or found twice by the drain", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1", JOBS);
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", queue: DEAD_LETTERS, start: 5000, drain: true });
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h2", queue: JOBS, start: 5100, drain: true });
    const { violations } = checkInvariants(ledger);
    expect(violations).toContainEqual(expect.stringMatching(/found 2 times by the drain/));
    expect(violations).toContainEqual(expect.stringMatching(/delivered from jobs .* after its delivery from jobs-dlq/));
  });

  it("catch a delivery after an acknowledged delete made while the lease was held", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100 });
    op(ledger, "h1", { kind: "delete", start: 300 });
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h2", start: 5000, drain: true });
    expect(checkInvariants(ledger).violations).toEqual([
      expect.stringMatching(/after its Delete on tasks returned OK/),
    ]);
  });

  it("take an SQS Delete's OK as proof only while the lease was held: SQS answers a superseded handle OK", () => {
    // Held from 110 to 1100: the OK at 310 proves the delete.
    const held = new Ledger();
    send(held, "u1", "m1");
    deliver(held, { messageId: "m1", uid: "u1", handle: "h1", start: 100, wire: "sqs" });
    op(held, "h1", { kind: "delete", start: 300, wire: "sqs" });
    deliver(held, { messageId: "m1", uid: "u1", handle: "h2", start: 5000, drain: true });
    expect(checkInvariants(held).violations).toEqual([expect.stringMatching(/after its Delete on tasks returned OK/)]);
    expect(checkInvariants(held).sqsStrictDeletes).toBe(1);

    // The lease ran out at 1100 and another consumer received the message: the OK at 1500 deleted nothing.
    const superseded = new Ledger();
    send(superseded, "u1", "m1");
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h1", start: 100, wire: "sqs" });
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h2", start: 1200, receiveCount: 2, visibilityMs: 3000 });
    op(superseded, "h1", { kind: "delete", start: 1500, wire: "sqs" });
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h3", start: 9000, receiveCount: 3, drain: true });
    expect(checkInvariants(superseded).violations).toEqual([]);

    // Over gRPC the same OK would be a broken promise (a superseded handle is refused there).
    const grpc = new Ledger();
    send(grpc, "u1", "m1");
    deliver(grpc, { messageId: "m1", uid: "u1", handle: "h1", start: 100 });
    op(grpc, "h1", { kind: "delete", start: 1500 });
    deliver(grpc, { messageId: "m1", uid: "u1", handle: "h3", start: 9000, receiveCount: 2, drain: true });
    expect(checkInvariants(grpc).violations).toEqual([expect.stringMatching(/after its Delete on tasks returned OK/)]);
  });

  it("take an SQS visibility change's OK as proof only while the lease was held: SQS answers a superseded handle OK", () => {
    // The lease ran out at 1100 and another consumer received the message: the OK at 1500 extended nothing.
    const superseded = new Ledger();
    send(superseded, "u1", "m1");
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h1", start: 100, wire: "sqs" });
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h2", start: 1200, receiveCount: 2 });
    op(superseded, "h1", { kind: "change", visibilityMs: 5000, start: 1500, wire: "sqs" });
    deliver(superseded, { messageId: "m1", uid: "u1", handle: "h3", start: 3000, receiveCount: 3, drain: true });
    expect(checkInvariants(superseded).violations).toEqual([]);

    // Over gRPC the same OK would be a broken promise: the message showed during the extension it confirmed.
    const grpc = new Ledger();
    send(grpc, "u1", "m1");
    deliver(grpc, { messageId: "m1", uid: "u1", handle: "h1", start: 100 });
    op(grpc, "h1", { kind: "change", visibilityMs: 5000, start: 1500 });
    deliver(grpc, { messageId: "m1", uid: "u1", handle: "h3", start: 3000, receiveCount: 2, drain: true });
    expect(checkInvariants(grpc).violations).not.toEqual([]);
  });

  it("catch a delivery of a message whose only send was refused, and count what crossed between the APIs", () => {
    const ledger = new Ledger();
    ledger.sends.push({
      uid: "u1",
      queue: TASKS,
      start: 0,
      end: 10,
      outcome: "rejected",
      messageId: undefined,
      wire: "sqs",
    });
    ledger.sends.push({ uid: "u2", queue: TASKS, start: 0, end: 10, outcome: "ok", messageId: "m2", wire: "sqs" });
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100, drain: true });
    deliver(ledger, { messageId: "m2", uid: "u2", handle: "h2", start: 100 });
    op(ledger, "h2", { kind: "delete", start: 300 });
    const result = checkInvariants(ledger);
    expect(result.violations).toEqual([expect.stringMatching(/^m1 \(u1\) delivered though its send was refused/)]);
    expect(result).toMatchObject({
      sqsSendsAcknowledged: 1,
      sentOverSqsReceivedOverGrpc: 1,
      sentOverGrpcReceivedOverSqs: 0,
    });
  });

  it("catch a redelivery before the lease's deadline, but not after a shortening change", () => {
    const early = new Ledger();
    send(early, "u1", "m1");
    deliver(early, { messageId: "m1", uid: "u1", handle: "h1", start: 100, visibilityMs: 2000 });
    deliver(early, { messageId: "m1", uid: "u1", handle: "h2", start: 1500, drain: true });
    expect(checkInvariants(early).violations).toEqual([expect.stringMatching(/certainly held it/)]);

    const shortened = new Ledger();
    send(shortened, "u1", "m1");
    deliver(shortened, { messageId: "m1", uid: "u1", handle: "h1", start: 100, visibilityMs: 2000 });
    // Cut to 300 ms at ~200: visible again from ~500, so a Receive at 1500 is fine.
    op(shortened, "h1", { kind: "change", visibilityMs: 300, start: 200 });
    deliver(shortened, { messageId: "m1", uid: "u1", handle: "h2", start: 1500, drain: true });
    expect(checkInvariants(shortened).violations).toEqual([]);
  });

  it("keep a lease certain across a renewal that broke at a kill, up to the shorter of both deadlines", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100, visibilityMs: 3000 });
    op(ledger, "h1", { kind: "renew", visibilityMs: 1000, start: 1000, outcome: "unknown" });
    // Before 2000 (1000 + 1000) the lease is certain either way.
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h2", start: 1800, drain: true });
    expect(checkInvariants(ledger).violations).toEqual([expect.stringMatching(/certainly held it/)]);
  });

  it("catch a redelivery from the queue before a Subscribe failure's retry delay ended, but not from the DLQ", () => {
    const failed = (redelivered: Partial<DeliveryRecord>): string[] => {
      const ledger = new Ledger();
      send(ledger, "u1", "m1", JOBS);
      deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", queue: JOBS, start: 100 });
      // Failed at ~300 with a 1 s retry delay: hidden in jobs until at least 1300.
      op(ledger, "h1", { kind: "fail", visibilityMs: 1000, start: 300 });
      deliver(ledger, {
        messageId: "m1",
        uid: "u1",
        handle: "h2",
        queue: JOBS,
        start: 800,
        receiveCount: 2,
        drain: true,
        ...redelivered,
      });
      const result = checkInvariants(ledger);
      expect(result.failuresAcknowledged).toBe(1);
      return result.violations;
    };
    expect(failed({})).toEqual([expect.stringMatching(/^m1 delivered again from jobs .*before the retry delay/)]);
    // At max_receive_count the failure dead-letters it at once instead.
    expect(failed({ queue: DEAD_LETTERS })).toEqual([]);
    expect(failed({ start: 1400 })).toEqual([]);
  });

  it("catch a refusal while the lease was held, and a call that broke while the broker was up", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100, visibilityMs: 3000 });
    op(ledger, "h1", {
      kind: "change",
      visibilityMs: 1000,
      start: 500,
      outcome: "rejected",
      reason: "LEASE_SUPERSEDED",
    });
    op(ledger, "h1", { kind: "delete", start: 700 });
    ledger.failure(new Error("socket closed"), "Send to tasks", false);
    const { violations } = checkInvariants(ledger);
    expect(violations).toEqual([
      expect.stringMatching(/refused with LEASE_SUPERSEDED while the lease was certainly held/),
      expect.stringMatching(/^unexpected: Send to tasks failed while the broker was up/),
    ]);
  });

  it("judge SQS errors by the holdshelf reasons they stand for", () => {
    const sqsError = (Code: string, httpStatusCode: number, message = ""): Error =>
      Object.assign(new Error(message), {
        name: Code,
        Code,
        $fault: httpStatusCode < 500 ? "client" : "server",
        $metadata: { httpStatusCode },
      });
    const ledger = new Ledger();
    const gone =
      "Value h for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.";
    expect(ledger.failure(sqsError("InvalidParameterValue", 400, gone), "ChangeMessageVisibility", false).reason).toBe(
      "MESSAGE_NOT_FOUND",
    );
    expect(ledger.unexpected).toEqual([]);
    expect(ledger.failure(sqsError("ServiceUnavailable", 503), "SendMessage", true).outcome).toBe("unknown");
    expect(ledger.unexpected).toEqual([]);
    expect(ledger.failure(sqsError("ServiceUnavailable", 503), "SendMessage", false).outcome).toBe("unknown");
    expect(ledger.failure(sqsError("ReceiptHandleIsInvalid", 400), "DeleteMessage", true).outcome).toBe("rejected");
    expect(ledger.failure(sqsError("InternalError", 500), "ReceiveMessage", true).outcome).toBe("unknown");
    expect(ledger.unexpected).toEqual([
      expect.stringMatching(/^SendMessage: ServiceUnavailable .*while the broker was up/),
      expect.stringMatching(/^DeleteMessage: RECEIPT_HANDLE_INVALID/),
    ]);
  });
});
