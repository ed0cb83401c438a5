// Below the wire: the real store stops writing after a failed batch until it
// is reopened, and a suspended broker (fake clock) refuses calls, runs no
// timers, lets no stale work write, and reloads its memory from disk.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LeaseStream } from "../../src/broker/lease-tracking.js";
import type { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { isStorageUnavailable, storageUnavailable } from "../../src/store/storage-unavailable.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  receiveOne,
  sendText,
  text,
  type BrokerHarness,
} from "../broker/broker-harness.js";
import { openStoreFixture, queueRecord, type StoreFixture } from "../store/store-fixtures.js";
import { diskError } from "./storage-fault-support.js";
import { settle } from "../support/wait.js";

describe("ClassicLevelStore after a failed write", () => {
  let fx: StoreFixture;
  beforeEach(async () => {
    fx = await openStoreFixture();
  });
  afterEach(async () => {
    await fx.dispose();
  });

  const putQueue = (name: string, id: number) => fx.store.commit([{ kind: "putQueue", queue: queueRecord(name, id) }]);
  const storedNames = async () => (await fx.store.load()).queues.map((queue) => queue.record.name).sort();

  it("refuses every later commit unwritten until reopened and resumed; then writes again", async () => {
    await putQueue("kept", 1);
    fx.writeFault.inject(diskError("Input/output error"));
    const failed = await putQueue("failed", 2).catch((error: unknown) => error);
    expect(isStorageUnavailable(failed)).toBe(true);
    expect((failed as HoldshelfError).message).toContain("EIO");
    fx.writeFault.inject(undefined);
    // Writes would work now, but a batch after a failed one is refused: it may build on what never landed.
    await expect(putQueue("after-failure", 3)).rejects.toBe(failed);
    expect(fx.store.unavailable).toBe(failed);

    await fx.store.reopen();
    expect(fx.store.unavailable).toBe(failed);
    await fx.store.probeWrite();
    fx.store.resumeWrites();
    expect(fx.store.unavailable).toBeUndefined();
    await putQueue("after-recovery", 4);
    expect(await storedNames()).toEqual(["after-recovery", "kept"]);
  });

  it("fails the probe write while the fault lasts", async () => {
    fx.writeFault.inject(diskError("No space left on device"));
    await fx.store.reopen();
    await expect(fx.store.probeWrite()).rejects.toSatisfy(isStorageUnavailable);
    fx.writeFault.inject(undefined);
    await expect(fx.store.probeWrite()).resolves.toBeUndefined();
  });

  it("answers a read of a closed database with the failure that stopped writing", async () => {
    fx.writeFault.inject(diskError("Input/output error"));
    const failed = await putQueue("failed", 2).catch((error: unknown) => error);
    await fx.store.close();
    await expect(fx.store.readMessages(1, [{ id: "00".repeat(16), hasCheckpoint: false }])).rejects.toBe(failed);
  });

  it("still fails an ordinary read error as it is while writes work", async () => {
    await fx.store.close();
    const read = fx.store.readMessages(1, [{ id: "00".repeat(16), hasCheckpoint: false }]);
    await expect(read).rejects.not.toSatisfy(isStorageUnavailable);
  });
});

describe("Broker suspended for a storage failure", () => {
  let h: BrokerHarness;
  const error = storageUnavailable(diskError("No space left on device"));
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "jobs", { visibilityTimeoutMs: 30_000 });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it("refuses calls with the error, runs no timers, and after reload serves what the disk holds", async () => {
    await sendText(h, "jobs", "a");
    const first = await receiveOne(h, "jobs");
    h.broker.suspend(error);
    expect(h.broker.suspended).toBe(true);
    await expectFailure(() => sendText(h, "jobs", "b"), "STORAGE_UNAVAILABLE");
    await expectFailure(() => h.broker.getQueue("jobs"), "STORAGE_UNAVAILABLE");
    await expectFailure(() => h.broker.delete("jobs", first.receiptHandle), "STORAGE_UNAVAILABLE");
    await expectFailure(() => h.broker.redriveMessages("jobs", "", 0, 0), "STORAGE_UNAVAILABLE");
    // The lease runs out while suspended: nothing acts on it, so nothing writes.
    h.clock.advance(60_000);
    await h.broker.settled();
    expect(h.backgroundErrors).toEqual([]);

    h.broker.reload(await h.store.load());
    expect(h.broker.suspended).toBe(false);
    await h.broker.runMaintenance();
    const again = await receiveOne(h, "jobs");
    expect([text(again), again.receiveCount]).toEqual(["a", 2]);
    // The old handle is fenced by the delivery epoch read back from disk.
    await expectFailure(() => h.broker.delete("jobs", first.receiptHandle), "LEASE_SUPERSEDED");
  });

  it("answers a repeated Delete only once the first one's removal is written: both fail when it fails", async () => {
    // Found in review: the retry found the message already gone from memory,
    // had nothing to write, and answered OK before the first write failed;
    // the reload then brought the "deleted" message back.
    await sendText(h, "jobs", "a");
    const delivery = await receiveOne(h, "jobs");
    h.writeFault.inject(diskError("Input/output error"));
    const first = h.broker.delete("jobs", delivery.receiptHandle);
    const retry = h.broker.delete("jobs", delivery.receiptHandle);
    await expectFailure(() => first, "STORAGE_UNAVAILABLE");
    await expectFailure(() => retry, "STORAGE_UNAVAILABLE");
  });

  it("ends lease streams and long polls with the error; a stream closed meanwhile releases nothing", async () => {
    await sendText(h, "jobs", "held");
    const delivery = await receiveOne(h, "jobs");
    const told: unknown[] = [];
    const stream: LeaseStream = h.broker.streams.open({
      leasesExpired: () => undefined,
      brokerClosing: () => undefined,
      storageUnavailable: (reason) => void told.push(reason),
    });
    await h.broker.streams.renew(stream, "jobs", [
      { receiptHandle: delivery.receiptHandle, visibilityTimeoutMs: 30_000 },
    ]);
    await createQueue(h, "idle");
    const waiting = h.broker.receive("idle", { waitTimeMs: 20_000 }).catch((caught: unknown) => caught);
    await settle();

    h.broker.suspend(error);
    expect(told).toEqual([error]);
    expect(await waiting).toBe(error);
    // release_on_disconnect cannot write now; the reload puts the lease back as stored.
    expect(await h.broker.streams.close(stream, true)).toBe(1);
    h.broker.reload(await h.store.load());
    expect(counts(h, "jobs")).toEqual({ visible: 0, inFlight: 1, delayed: 0 });
  });

  it("lets no work of the old memory write after a reload: a paced redrive stops", async () => {
    await createQueue(h, "dlq");
    for (const name of ["1", "2", "3"]) await sendText(h, "dlq", name);
    // One message a second: the redrive sleeps on the fake clock after each.
    const redrive = h.broker.redriveMessages("dlq", "jobs", 0, 1).catch((caught: unknown) => caught);
    // The first move is a real write: wait for it (in real time; the fake clock holds the pace).
    for (const started = Date.now(); counts(h, "jobs").visible === 0 && Date.now() - started < 10_000; ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(counts(h, "jobs").visible).toBe(1);

    h.broker.suspend(error);
    h.broker.reload(await h.store.load());
    h.clock.advance(1000);
    // Its next move would write from memory the reload replaced: refused instead.
    expect(await redrive).toBe(error);
    expect(counts(h, "jobs").visible).toBe(1);
    expect(counts(h, "dlq").visible).toBe(2);
    await h.restart();
    expect(counts(h, "jobs").visible).toBe(1);
    expect(counts(h, "dlq").visible).toBe(2);
  });
});
