import { describe, expect, it } from "vitest";
import { DEAD_LETTERS, JOBS, TASKS } from "./crash-queues.js";
import { checkInvariants } from "./invariants.js";
import { Ledger, type DeliveryRecord, type LeaseOpRecord } from "./ledger.js";

// The crash harness is only as good as its checks: each promise is broken
// here on purpose, in a ledger written by hand, and must be caught.

function send(ledger: Ledger, uid: string, messageId: string, queue: string = TASKS): void {
  ledger.sends.push({ uid, queue, start: 0, end: 10, outcome: "ok", messageId });
}

function deliver(ledger: Ledger, d: Partial<DeliveryRecord> & Pick<DeliveryRecord, "messageId" | "uid" | "handle" | "start">): DeliveryRecord {
  const delivery: DeliveryRecord = { queue: TASKS, end: d.start + 10, visibilityMs: 1000, receiveCount: 1, drain: false, ...d };
  ledger.deliveries.push(delivery);
  return delivery;
}

function op(ledger: Ledger, handle: string, o: Partial<LeaseOpRecord> & Pick<LeaseOpRecord, "kind" | "start">): void {
  ledger.leaseOp(handle, { visibilityMs: 0, end: o.start + 10, outcome: "ok", reason: "", ...o });
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
    expect(violations).toEqual([expect.stringMatching(/^m1 .*never delivered/), expect.stringMatching(/^m2 .*drain did not find it/)]);
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
    expect(checkInvariants(ledger).violations).toEqual([expect.stringMatching(/after its Delete on tasks returned OK/)]);
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

  it("catch a refusal while the lease was held, and a call that broke while the broker was up", () => {
    const ledger = new Ledger();
    send(ledger, "u1", "m1");
    deliver(ledger, { messageId: "m1", uid: "u1", handle: "h1", start: 100, visibilityMs: 3000 });
    op(ledger, "h1", { kind: "change", visibilityMs: 1000, start: 500, outcome: "rejected", reason: "LEASE_SUPERSEDED" });
    op(ledger, "h1", { kind: "delete", start: 700 });
    ledger.failure(new Error("socket closed"), "Send to tasks", false);
    const { violations } = checkInvariants(ledger);
    expect(violations).toEqual([
      expect.stringMatching(/refused with LEASE_SUPERSEDED while the lease was certainly held/),
      expect.stringMatching(/^unexpected: Send to tasks failed while the broker was up/),
    ]);
  });
});
