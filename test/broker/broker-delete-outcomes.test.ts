import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DepartureBound } from "../../src/broker/departure-bound.js";
import { deadLettersKept, deletesKept, RecentDepartures } from "../../src/broker/recent-departures.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendAndReceive,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 1000;

describe("what a Delete says it did", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "dlq");
    await createQueue(h, "work", { visibilityTimeoutMs: vt });
    await createQueue(h, "once", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
    });
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  /** Lets the lease run out and the expiry (and any dead-letter move) happen. */
  async function expire(): Promise<void> {
    h.clock.advance(vt);
    await h.broker.runMaintenance();
    await h.broker.settled();
  }

  it("deleted now, then already deleted on a repeat", async () => {
    const { receiptHandle } = await sendAndReceive(h, "work");
    expect(await h.broker.delete("work", receiptHandle)).toBe("deleted");
    expect(await h.broker.delete("work", receiptHandle)).toBe("already-deleted");
  });

  it("deleted now after the lease ran out, if nobody received the message since", async () => {
    const { receiptHandle } = await sendAndReceive(h, "work");
    await expire();
    expect(await h.broker.delete("work", receiptHandle)).toBe("deleted");
  });

  it("dead-lettered: the lease ran out and the message moved before the delete, which deletes nothing", async () => {
    const { receiptHandle } = await sendAndReceive(h, "once");
    await expire();
    expect(counts(h, "dlq").visible).toBe(1);
    expect(await h.broker.delete("once", receiptHandle)).toBe("dead-lettered");
    expect(counts(h, "dlq").visible).toBe(1);
  });

  it("received again: another lease took the message and deleted it", async () => {
    const first = await sendAndReceive(h, "work");
    await expire();
    const second = await receiveOne(h, "work");
    // While the later lease holds it, the old handle is refused, as before.
    await expectFailure(() => h.broker.delete("work", first.receiptHandle), "LEASE_SUPERSEDED");
    expect(await h.broker.delete("work", second.receiptHandle)).toBe("deleted");
    expect(await h.broker.delete("work", first.receiptHandle)).toBe("received-again");
  });

  it("received again: another lease took the message and it was dead-lettered under that lease", async () => {
    await createQueue(h, "twice", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 2 },
    });
    const first = await sendAndReceive(h, "twice");
    await expire();
    await receiveOne(h, "twice");
    await expire();
    expect(counts(h, "dlq").visible).toBe(1);
    expect(await h.broker.delete("twice", first.receiptHandle)).toBe("received-again");
  });

  it("no longer held: purged, or removed before a restart", async () => {
    const purged = await sendAndReceive(h, "work");
    await h.broker.purgeQueue("work");
    expect(await h.broker.delete("work", purged.receiptHandle)).toBe("no-longer-held");
    const dead = await sendAndReceive(h, "once");
    await expire();
    await h.restart();
    expect(await h.broker.delete("once", dead.receiptHandle)).toBe("no-longer-held");
  });

  it("forgets a dead-letter move after its time bound, and a delete after its own", async () => {
    const dead = await sendAndReceive(h, "once");
    const deleted = await sendAndReceive(h, "work");
    await h.broker.delete("work", deleted.receiptHandle);
    await expire();
    h.clock.advance(deletesKept.ms - vt);
    expect(await h.broker.delete("work", deleted.receiptHandle)).toBe("no-longer-held");
    expect(await h.broker.delete("once", dead.receiptHandle)).toBe("dead-lettered");
    h.clock.advance(deadLettersKept.ms);
    expect(await h.broker.delete("once", dead.receiptHandle)).toBe("no-longer-held");
  });

  it("keeps at most its count of deletes, forgetting the oldest, without pushing out dead-letter moves", () => {
    const departures = new RecentDepartures();
    departures.note("dead", 1, "dead-lettered", 0);
    for (let id = 0; id <= deletesKept.count; id++) departures.note(`m${id}`, 1, "deleted", 0);
    expect(departures.outcome("m0", 1, 0)).toBe("no-longer-held");
    expect(departures.outcome("m1", 1, 0)).toBe("already-deleted");
    expect(departures.outcome(`m${deletesKept.count}`, 1, 0)).toBe("already-deleted");
    expect(departures.outcome("dead", 1, 0)).toBe("dead-lettered");
  });

  it("forgets a dead-letter move that failed to commit: a late Delete is not told the message moved", async () => {
    const dead = await sendAndReceive(h, "once");
    h.writeFault.inject(new Error("disk full"));
    await expire();
    h.writeFault.inject(undefined);
    expect(h.backgroundErrors.splice(0)).toMatchObject([{ reason: "STORAGE_UNAVAILABLE" }]);
    // The move failed (the message is still stored where it was, for the store's recovery to find): not dead-lettered.
    expect(await h.broker.delete("once", dead.receiptHandle)).toBe("no-longer-held");
  });

  it("forgets records past their age when a late Delete looks, even on a queue that notes nothing more", () => {
    const bound = new DepartureBound();
    const departures = new RecentDepartures(bound);
    departures.note("gone", 1, "deleted", 0);
    departures.note("dead", 1, "dead-lettered", 0);
    expect(departures.outcome("other", 1, deletesKept.ms)).toBe("no-longer-held");
    expect([departures.size, bound.size]).toEqual([1, 1]);
    expect(departures.outcome("other", 1, deadLettersKept.ms)).toBe("no-longer-held");
    expect([departures.size, bound.size]).toEqual([0, 0]);
  });

  it("keeps at most the broker-wide count of records across queues, forgetting the oldest wherever it is", () => {
    const bound = new DepartureBound(3);
    const [idle, busy] = [new RecentDepartures(bound), new RecentDepartures(bound)];
    idle.note("a", 1, "dead-lettered", 0);
    idle.note("b", 1, "deleted", 1);
    busy.note("c", 1, "deleted", 2);
    busy.note("c", 1, "deleted", 3);
    expect(bound.size).toBe(3);
    busy.note("d", 1, "deleted", 4);
    expect([bound.size, idle.size, busy.size]).toEqual([3, 1, 2]);
    expect(idle.outcome("a", 1, 5)).toBe("no-longer-held");
    expect(idle.outcome("b", 1, 5)).toBe("already-deleted");
    expect(busy.outcome("c", 1, 5)).toBe("already-deleted");
  });

  it("tells by the later record when a message was both dead-lettered and, redriven, deleted", () => {
    const departures = new RecentDepartures();
    departures.note("m", 1, "dead-lettered", 0);
    departures.note("m", 2, "deleted", 1);
    expect(departures.outcome("m", 1, 2)).toBe("received-again");
    expect(departures.outcome("m", 2, 2)).toBe("already-deleted");
  });

  it("says each DeleteBatch entry's outcome, and none for a failed entry", async () => {
    const deleted = await sendAndReceive(h, "once");
    const dead = await sendAndReceive(h, "once");
    await h.broker.delete("once", deleted.receiptHandle);
    await expire();
    const fresh = await sendAndReceive(h, "once");
    const outcomes = await h.broker.deleteBatch("once", [
      fresh.receiptHandle,
      deleted.receiptHandle,
      dead.receiptHandle,
      "bogus",
    ]);
    expect(outcomes.map((o) => o.deleteOutcome)).toEqual(["deleted", "already-deleted", "dead-lettered", undefined]);
    expect(outcomes[3]!.error?.reason).toBe("RECEIPT_HANDLE_INVALID");
  });
});
