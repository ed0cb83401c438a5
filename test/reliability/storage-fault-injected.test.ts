// Storage faults, injected: with every write of the real LevelDB store made
// to fail, the RPCs that need storage answer UNAVAILABLE STORAGE_UNAVAILABLE,
// health and /readyz say not serving, and once writes work again the broker
// recovers by itself with its memory rebuilt from disk: nothing answered OK
// is lost, nothing refused is there, also after a restart.
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import {
  diskError,
  drainBodies,
  healthOf,
  readyzStatus,
  recordingLogger,
  ServingStatus,
  storageAvailableGauge,
  waitFor,
} from "./storage-fault-support.js";

const UNAVAILABLE = status.UNAVAILABLE;
const reason = "STORAGE_UNAVAILABLE";
// The broker's backoff tops out at 2 s; recovery must come well within this on a loaded machine.
const recoveryBoundMs = 10_000;

describe("storage faults (injected on the real store's write path)", () => {
  let h: GrpcHarness;
  let log: ReturnType<typeof recordingLogger>;
  const minute = { seconds: 60n };

  beforeEach(async () => {
    log = recordingLogger();
    h = await startGrpcHarness({ metricsListen: "127.0.0.1:0", logger: log.logger });
    await h.rpc.createQueue({ name: "jobs" });
    await h.rpc.createQueue({ name: "idle" });
  });
  afterEach(async () => {
    h.writeFault.inject(undefined);
    await h.stop();
  });

  const send = (body: string) => h.rpc.send({ queue: "jobs", body: Buffer.from(body) });
  const serving = async () => (await healthOf(h.server.address)) === ServingStatus.SERVING;

  it("refuses what needs storage with UNAVAILABLE, recovers by itself, and keeps exactly what it answered OK for", async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 10; i++) {
      await send(`ok-${i}`);
      acknowledged.push(`ok-${i}`);
    }
    await h.rpc.sendBatch({ queue: "jobs", entries: [0, 1, 2].map((i) => ({ body: Buffer.from(`batch-${i}`) })) });
    acknowledged.push("batch-0", "batch-1", "batch-2");
    // Two leases taken before the fault: one deleted (OK: must never come back), one held on a Heartbeat stream.
    const {
      messages: [deleted, held],
    } = await h.rpc.receive({ queue: "jobs", maxMessages: 2, visibilityTimeout: minute });
    await h.rpc.delete({ queue: "jobs", receiptHandle: deleted!.receiptHandle });
    const deletedBody = Buffer.from(deleted!.body).toString("utf8");
    const stream = openHeartbeatStream(h.server.address);
    stream.send({ queue: "jobs", leases: [{ receiptHandle: held!.receiptHandle, visibilityTimeout: minute }] });
    expect((await stream.next()).leases[0]!.held).toBe(true);
    // Settled at once into a value, so that its rejection is never unhandled while other calls run.
    const longPoll = h.rpc.receive({ queue: "idle", waitTime: { seconds: 20n } }).then(
      () => undefined,
      (error: unknown) => error,
    );

    h.writeFault.inject(diskError("Input/output error"));
    const refused = await expectRpcError(send("refused-0"), UNAVAILABLE, reason);
    expect(refused.message).toMatch(
      /storage write failed \(EIO: input\/output error\); the broker is recovering, retry later/,
    );
    expect(refused.message).not.toContain("secret-path");
    expect(refused.message).not.toContain(h.dataDir);
    // The waiting long poll and the open Heartbeat stream end with it too.
    await expectRpcError(
      longPoll.then((error) => Promise.reject(error)),
      UNAVAILABLE,
      reason,
    );
    expect((await stream.closed)?.reason).toBe(reason);
    stream.close();

    await expectRpcError(
      h.rpc.sendBatch({ queue: "jobs", entries: [{ body: Buffer.from("refused-1") }] }),
      UNAVAILABLE,
      reason,
    );
    await expectRpcError(h.rpc.receive({ queue: "jobs", visibilityTimeout: minute }), UNAVAILABLE, reason);
    await expectRpcError(h.rpc.delete({ queue: "jobs", receiptHandle: held!.receiptHandle }), UNAVAILABLE, reason);
    await expectRpcError(
      h.rpc.changeVisibility({ queue: "jobs", receiptHandle: held!.receiptHandle, visibilityTimeout: { seconds: 0n } }),
      UNAVAILABLE,
      reason,
    );
    await expectRpcError(h.rpc.createQueue({ name: "new" }), UNAVAILABLE, reason);
    const renewing = openHeartbeatStream(h.server.address);
    renewing.send({ queue: "jobs", leases: [{ receiptHandle: held!.receiptHandle, visibilityTimeout: minute }] });
    expect(await renewing.closed).toMatchObject({ code: UNAVAILABLE, reason });
    renewing.close();

    expect(await healthOf(h.server.address)).toBe(ServingStatus.NOT_SERVING);
    expect(await readyzStatus(h.server.metricsAddress!)).toBe(503);
    expect(await storageAvailableGauge(h.server.metricsAddress!)).toBe(0);
    // While writes still fail, the recovery's attempts fail too: still down.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expectRpcError(send("refused-2"), UNAVAILABLE, reason);

    h.writeFault.inject(undefined);
    await waitFor(serving, recoveryBoundMs, "the broker to serve again");
    expect(await readyzStatus(h.server.metricsAddress!)).toBe(200);
    expect(await storageAvailableGauge(h.server.metricsAddress!)).toBe(1);
    await send("after-0");
    acknowledged.push("after-0");

    // One line when storage went down, one when it came back; no per-call noise.
    const errors = log.lines.filter((line) => line.level === "error");
    expect(errors.map((line) => line.msg)).toEqual([
      "storage unavailable: refusing calls that need it until writes succeed again",
    ]);
    expect(log.lines.filter((line) => line.msg === "storage available again")).toHaveLength(1);

    // The held lease survived as written: its handle still works, and releases it.
    await h.rpc.changeVisibility({
      queue: "jobs",
      receiptHandle: held!.receiptHandle,
      visibilityTimeout: { seconds: 0n },
    });
    const expected = acknowledged.filter((body) => body !== deletedBody).sort();
    expect((await h.rpc.getQueue({ name: "jobs" })).queue?.stats?.visible).toBe(BigInt(expected.length));
    await h.restart();
    expect((await drainBodies(h.rpc, "jobs")).sort()).toEqual(expected);
  });

  it("drops a change whose write failed: after recovery memory holds what the disk holds", async () => {
    await send("leased");
    await send("visible");
    const {
      messages: [leased],
    } = await h.rpc.receive({ queue: "jobs", maxMessages: 1, visibilityTimeout: minute });
    expect(Buffer.from(leased!.body).toString()).toBe("leased");

    h.writeFault.inject(diskError("Input/output error"));
    // In memory each of these changed the queue before its write failed.
    await expectRpcError(h.rpc.delete({ queue: "jobs", receiptHandle: leased!.receiptHandle }), UNAVAILABLE, reason);
    h.writeFault.inject(undefined);
    await waitFor(serving, recoveryBoundMs, "the broker to serve again");

    h.writeFault.inject(diskError("Input/output error"));
    await expectRpcError(h.rpc.receive({ queue: "jobs", visibilityTimeout: minute }), UNAVAILABLE, reason);
    h.writeFault.inject(undefined);
    await waitFor(serving, recoveryBoundMs, "the broker to serve again");

    // The failed delete is undone: the lease is still held, by the same handle.
    const counts = (await h.rpc.getQueue({ name: "jobs" })).queue!.stats!;
    expect({ visible: counts.visible, inFlight: counts.inFlight }).toEqual({ visible: 1n, inFlight: 1n });
    // The failed receive is undone: its delivery never counted.
    const { messages } = await h.rpc.receive({ queue: "jobs", maxMessages: 10, visibilityTimeout: minute });
    expect(messages.map((message) => [Buffer.from(message.body).toString(), message.receiveCount])).toEqual([
      ["visible", 1],
    ]);
    await h.rpc.delete({ queue: "jobs", receiptHandle: leased!.receiptHandle });
    expect(log.lines.filter((line) => line.msg === "storage available again")).toHaveLength(2);
    expect(log.lines.filter((line) => line.msg === "unexpected error in a call")).toEqual([]);
  });

  it("refuses queue admin while down and serves reads of the rebuilt memory after", async () => {
    h.writeFault.inject(diskError("No space left on device"));
    const refused = await expectRpcError(h.rpc.purgeQueue({ name: "jobs" }), UNAVAILABLE, reason);
    expect(refused.message).toContain("ENOSPC: no space left on device");
    await expectRpcError(h.rpc.getQueue({ name: "jobs" }), UNAVAILABLE, reason);
    await expectRpcError(h.rpc.listQueues({}), UNAVAILABLE, reason);
    await expectRpcError(h.rpc.deleteQueue({ name: "idle" }), UNAVAILABLE, reason);
    h.writeFault.inject(undefined);
    await waitFor(serving, recoveryBoundMs, "the broker to serve again");
    const names = (await h.rpc.listQueues({})).queues.map((queue) => queue.name);
    expect(names).toEqual(["idle", "jobs"]);
  });

  it("shuts down cleanly while storage is down", async () => {
    h.writeFault.inject(diskError("Input/output error"));
    await expectRpcError(send("refused"), UNAVAILABLE, reason);
    const other = createQueueServiceRpc(h.server.address);
    await expectRpcError(other.send({ queue: "jobs", body: Buffer.from("x") }), UNAVAILABLE, reason);
    other.close();
    h.writeFault.inject(undefined);
    await h.restart();
    await send("after restart");
    expect(await drainBodies(h.rpc, "jobs")).toEqual(["after restart"]);
  });
});
