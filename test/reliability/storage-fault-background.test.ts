// Storage faults in background work: a write with no caller to answer (here
// the retention sweep, on the broker's timers) fails like any other; the
// broker goes down without a "background work failed" line, and recovers on
// its own clock (a fake one here, advanced by the test) once writes work.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { diskError, healthOf, recordingLogger, ServingStatus, waitFor } from "./storage-fault-support.js";
import { settle } from "../support/wait.js";

describe("storage faults in background writes", () => {
  let h: GrpcHarness;
  let clock: FakeClock;
  let log: ReturnType<typeof recordingLogger>;

  beforeEach(async () => {
    clock = new FakeClock();
    log = recordingLogger();
    h = await startGrpcHarness({ clock, logger: log.logger });
    await h.rpc.createQueue({ name: "jobs", config: { retention: { seconds: 60n } } });
  });
  afterEach(async () => {
    h.writeFault.inject(undefined);
    await h.stop();
  });

  /** Moves the fake clock on a second at a time, letting each sweep's writes settle. */
  async function advanceSeconds(seconds: number): Promise<void> {
    for (let i = 0; i < seconds; i++) {
      clock.advance(1000);
      for (let turn = 0; turn < 5; turn++) await settle();
    }
  }

  it("goes down when the retention sweep's write fails, and comes back on its clock once writes work", async () => {
    await h.rpc.send({ queue: "jobs", body: Buffer.from("old") });
    h.writeFault.inject(diskError("Input/output error"));
    // Retention ends at 60 s; not a step further, or the clock would also start the first recovery attempt.
    await advanceSeconds(60);
    await waitFor(async () => h.server.broker.suspended, 10_000, "the failed sweep to take storage down");
    expect(await healthOf(h.server.address)).toBe(ServingStatus.NOT_SERVING);
    expect(log.lines.filter((line) => line.level === "error").map((line) => line.msg)).toEqual([
      "storage unavailable: refusing calls that need it until writes succeed again",
    ]);

    h.writeFault.inject(undefined);
    // The first attempt waits 100 ms on the broker's clock: nothing happens until it moves.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(h.server.broker.suspended).toBe(true);
    clock.advance(100);
    await waitFor(async () => (await healthOf(h.server.address)) === ServingStatus.SERVING, 10_000, "recovery");

    // The removal never landed, so the message came back from disk; the next sweep removes it for good.
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats!.visible).toBe(1n);
    await advanceSeconds(1);
    await h.server.broker.settled();
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats!.visible).toBe(0n);
    await h.restart();
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats!.visible).toBe(0n);
    expect(log.lines.filter((line) => line.msg === "background work failed")).toEqual([]);
  });

  it("a lease that ran out during the outage expires as storage comes back, and that write lands", async () => {
    // Found in review: the reload expired such leases while writes were still
    // refused, so memory moved the message to its backoff while disk kept the
    // old lease; a later Delete then missed the old entry and, after a
    // restart, the deleted message came back.
    await h.rpc.createQueue({
      name: "work",
      config: {
        visibilityTimeout: { seconds: 1n },
        retryPolicy: { minBackoff: { seconds: 600n }, maxBackoff: { seconds: 600n } },
      },
    });
    await h.rpc.send({ queue: "work", body: Buffer.from("job") });
    expect((await h.rpc.receive({ queue: "work" })).messages).toHaveLength(1);
    h.writeFault.inject(diskError("Input/output error"));
    await h.rpc.send({ queue: "work", body: Buffer.from("refused") }).catch(() => undefined);
    await waitFor(async () => h.server.broker.suspended, 10_000, "storage to go down");
    // The lease (1 s) runs out while storage is down; the first attempt waits 100 ms.
    clock.advance(5_000);
    h.writeFault.inject(undefined);
    clock.advance(100);
    await waitFor(async () => (await healthOf(h.server.address)) === ServingStatus.SERVING, 10_000, "recovery");
    await h.server.broker.settled();
    expect(h.server.broker.suspended).toBe(false);

    // After its backoff the message is delivered again; deleting it removes it for good.
    await advanceSeconds(601);
    const again = await h.rpc.receive({ queue: "work" });
    expect(again.messages.map((message) => Buffer.from(message.body).toString())).toEqual(["job"]);
    await h.rpc.delete({ queue: "work", receiptHandle: again.messages[0]!.receiptHandle });
    await h.restart();
    expect((await h.rpc.getQueue({ name: "work" })).queue!.stats).toMatchObject({
      visible: 0n,
      inFlight: 0n,
      delayed: 0n,
    });
  });
});
