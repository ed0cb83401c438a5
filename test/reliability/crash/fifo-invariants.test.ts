import { describe, expect, it } from "vitest";
import { fifoDeduplicationId, fifoUid } from "./fifo-bodies.js";
import { checkFifoInvariants } from "./fifo-invariants.js";
import { FifoLedger, type FifoAttempt, type FifoDeliveryRecord } from "./fifo-ledger.js";
import { ORDERS } from "./fifo-queues.js";
import type { LeaseOpRecord } from "./ledger.js";

// As invariants.test.ts does for the shared checks: each FIFO promise is
// broken here on purpose, in a ledger written by hand, and must be caught.

const group = "g";

function ledgerOf(): FifoLedger {
  const ledger = new FifoLedger();
  ledger.lives.push({ started: 0, killed: undefined });
  return ledger;
}

/** The i-th message id and sequence number of the ledger's story: both increase with i. */
const idOf = (i: number) => `0000000${i}-0000-7000-8000-000000000000`;
const sequenceOf = (i: number) => String(1000 + i).padStart(20, "0");

function send(ledger: FifoLedger, counter: number, o: { at?: number; attempt?: FifoAttempt; id?: number } = {}): void {
  const at = o.at ?? counter * 10;
  const id = o.id ?? counter;
  ledger.sends.push({
    uid: fifoUid({ group, counter }),
    queue: ORDERS.name,
    start: at,
    end: at + 5,
    outcome: "ok",
    messageId: idOf(id),
    wire: "grpc",
    group,
    counter,
    attempt: o.attempt ?? "first",
    sequenceNumber: sequenceOf(id),
    life: 0,
  });
}

/** Delivers messages (by counter) in one Receive answer starting at `start`; returns their handles. */
function receive(ledger: FifoLedger, start: number, counters: number[], o: Partial<FifoDeliveryRecord> = {}): string[] {
  const receive = ledger.nextReceive();
  return counters.map((counter, position) => {
    const content = { group, counter };
    const handle = `h${receive}-${counter}`;
    ledger.deliveries.push({
      messageId: idOf(counter),
      uid: fifoUid(content),
      queue: ORDERS.name,
      handle,
      start,
      end: start + 10,
      visibilityMs: 1000,
      receiveCount: 1,
      drain: false,
      wire: "grpc",
      group,
      counter,
      messageGroupId: group,
      sequenceNumber: sequenceOf(counter),
      deduplicationId: fifoDeduplicationId(content),
      receive,
      position,
      ...o,
    });
    return handle;
  });
}

function del(ledger: FifoLedger, handle: string, start: number, o: Partial<LeaseOpRecord> = {}): void {
  ledger.leaseOp(handle, {
    kind: "delete",
    visibilityMs: 0,
    start,
    end: start + 10,
    outcome: "ok",
    reason: "",
    wire: "grpc",
    ...o,
  });
}

const counters = (next: number) => new Map([[group, next]]);

describe("the FIFO crash harness's checks", () => {
  it("pass a clean history: one by one, a run of a group in one answer, a redelivery after a lease ran out", () => {
    const ledger = ledgerOf();
    for (let counter = 0; counter < 4; counter++) send(ledger, counter);
    const [h0] = receive(ledger, 100, [0]);
    del(ledger, h0!, 200);
    // 1 and 2 in one answer; their leases run out, 1 comes back alone, then both are deleted.
    const [h1, h2] = receive(ledger, 300, [1, 2]);
    const [h1again] = receive(ledger, 1400, [1]);
    del(ledger, h1!, 1500, { outcome: "rejected", reason: "LEASE_SUPERSEDED" });
    del(ledger, h2!, 1500);
    del(ledger, h1again!, 1600);
    const [h3] = receive(ledger, 1700, [3]);
    del(ledger, h3!, 1800);
    const result = checkFifoInvariants(ledger, counters(4));
    expect(result.violations).toEqual([]);
    expect(result.answersWithRuns).toBe(1);
  });

  it("pass a group's head redelivered with a later message in one answer, the ones between deleted meanwhile", () => {
    // 0, 1, 2 in one answer; 0's lease runs out and 0 alone is received again, while 1 and 2 (whose leases
    // nobody took over) are deleted; then 0 comes back with 3 in one answer: 1 and 2 are gone, 0 comes first.
    const ledger = ledgerOf();
    for (let counter = 0; counter < 4; counter++) send(ledger, counter);
    const [h0, h1, h2] = receive(ledger, 100, [0, 1, 2]);
    const [h0again] = receive(ledger, 1200, [0]);
    del(ledger, h0!, 1300, { outcome: "rejected", reason: "LEASE_SUPERSEDED" });
    del(ledger, h1!, 1300);
    del(ledger, h2!, 1300);
    ledger.leaseOp(h0again!, {
      kind: "change",
      visibilityMs: 0,
      start: 1400,
      end: 1410,
      outcome: "ok",
      reason: "",
      wire: "grpc",
    });
    const [h0third, h3] = receive(ledger, 1500, [0, 3]);
    del(ledger, h0third!, 1600);
    del(ledger, h3!, 1600);
    expect(checkFifoInvariants(ledger, counters(4)).violations).toEqual([]);
  });

  it("catch a later message with a gap before it in one answer while a message in the gap is not gone", () => {
    const ledger = ledgerOf();
    for (let counter = 0; counter < 3; counter++) send(ledger, counter);
    const [h0, h2] = receive(ledger, 100, [0, 2]);
    del(ledger, h0!, 150);
    const [h1] = receive(ledger, 1200, [1]);
    del(ledger, h1!, 1300);
    del(ledger, h2!, 1300);
    expect(checkFifoInvariants(ledger, counters(3)).violations).toEqual([
      expect.stringMatching(/^g: message 2 .* 100..110 while message 1 was not gone: delivered 1200..1210/),
    ]);
  });

  it("catch a message delivered while an earlier one of its group is leased", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 1);
    const [h0] = receive(ledger, 100, [0]);
    const [h1] = receive(ledger, 150, [1]);
    del(ledger, h0!, 200);
    del(ledger, h1!, 300);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      expect.stringMatching(
        /^g: message 1 .* 150..160 while message 0 was not gone: delivered 100..110 for 1000 ms, then delete\(0\) 200..210 ok$/,
      ),
    ]);
  });

  it("catch a message delivered before an earlier one of its group", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 1);
    const [h1] = receive(ledger, 100, [1]);
    const [h0] = receive(ledger, 200, [0]);
    del(ledger, h1!, 300);
    del(ledger, h0!, 300);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      expect.stringMatching(
        /^g: message 1 .* 100..110 while message 0 was not gone: delivered 200..210 for 1000 ms, then delete\(0\) 300..310 ok$/,
      ),
      // And message 1, still leased, should have blocked its group.
      expect.stringMatching(/^g: message 0 .* 200..210 while message 1 was certainly leased \(110..300\)/),
    ]);
  });

  it("catch a group served while a message of it is leased: its released head delivered again in the meantime", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 1);
    const [h0, h1] = receive(ledger, 100, [0, 1]);
    ledger.leaseOp(h0!, {
      kind: "change",
      visibilityMs: 0,
      start: 200,
      end: 210,
      outcome: "ok",
      reason: "",
      wire: "grpc",
    });
    const [h0again] = receive(ledger, 300, [0]);
    del(ledger, h0again!, 400);
    del(ledger, h1!, 500);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      expect.stringMatching(
        /^g: message 0 .* 300..310 while message 1 was certainly leased \(110..500\): delivered 100..110 .* delete\(0\) 500..510 ok$/,
      ),
    ]);
  });

  it("catch a group's messages out of order within one answer", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 1);
    const [h1, h0] = receive(ledger, 100, [1, 0]);
    del(ledger, h1!, 200);
    del(ledger, h0!, 200);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      expect.stringMatching(/^g: message 1 .* while message 0 was not gone/),
      expect.stringMatching(/^g: message 0 .* came after message 1 in one answer/),
    ]);
  });

  it("do not count a delete broken at a kill when its message came back: the next one was delivered too early", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 1);
    const [h0] = receive(ledger, 100, [0]);
    del(ledger, h0!, 200, { outcome: "unknown", reason: "code 14" });
    const [h1] = receive(ledger, 300, [1]);
    const [h0again] = receive(ledger, 1300, [0], { drain: true });
    del(ledger, h1!, 400);
    del(ledger, h0again!, 1400);
    const { violations } = checkFifoInvariants(ledger, counters(2));
    expect(violations).toEqual([
      expect.stringMatching(
        /^g: message 1 .* while message 0 was not gone: .*delete\(0\) 200..210 unknown; delivered 1300/,
      ),
    ]);
  });

  it("catch a retried send stored a second time, and a repeat answered with another sequence number", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    send(ledger, 0, { attempt: "retry", id: 5, at: 50 });
    send(ledger, 1);
    ledger.sends.push({
      ...ledger.sends.at(-1)!,
      attempt: "repeat",
      sequenceNumber: sequenceOf(9),
      start: 60,
      end: 65,
    });
    const [h0, h1] = receive(ledger, 100, [0, 1]);
    const [h0twice] = receive(ledger, 100, [0], { messageId: idOf(5), sequenceNumber: sequenceOf(5) });
    for (const handle of [h0, h1, h0twice]) del(ledger, handle!, 200);
    const { violations } = checkFifoInvariants(ledger, counters(2));
    expect(violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^body g#0 stored as 2 messages/),
        expect.stringMatching(/^g#0 stored twice: its first send answered .* its retry send/),
        expect.stringMatching(
          /^g#1 stored twice: its first send answered .* \(sequence 0+1001\) .* its repeat send .* \(sequence 0+1009\)/,
        ),
      ]),
    );
  });

  it("catch sequence numbers out of send order, and deliveries with the wrong FIFO fields", () => {
    const ledger = ledgerOf();
    send(ledger, 0, { id: 1 });
    send(ledger, 1, { id: 0 });
    const [h0] = receive(ledger, 100, [0], {
      messageId: idOf(1),
      sequenceNumber: sequenceOf(1),
      messageGroupId: "other",
    });
    del(ledger, h0!, 200);
    const [h1] = receive(ledger, 300, [1], {
      messageId: idOf(0),
      sequenceNumber: sequenceOf(0),
      deduplicationId: "g.7",
    });
    del(ledger, h1!, 400);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      expect.stringMatching(/ \(g#0\) delivered with message_group_id "other"$/),
      expect.stringMatching(/ \(g#1\) delivered with deduplication_id "g.7", not "g.1"$/),
      "g: message 1 has sequence number 00000000000000001000, not above message 0's 00000000000000001001",
    ]);
  });

  it("catch a message its producer made that was never acknowledged", () => {
    const ledger = ledgerOf();
    send(ledger, 0);
    del(ledger, receive(ledger, 100, [0])[0]!, 200);
    expect(checkFifoInvariants(ledger, counters(2)).violations).toEqual([
      "g#1 was never acknowledged, even after the last restart",
    ]);
  });
});
