import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream, type HeartbeatStream } from "../support/heartbeat-stream.js";

const holdLeasesScript = fileURLToPath(new URL("../fixtures/hold-leases.mjs", import.meta.url));

describe("the Heartbeat stream", () => {
  let h: GrpcHarness;
  let clock: FakeClock | undefined;
  const streams: HeartbeatStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  async function start(options: { fakeClock: boolean }): Promise<void> {
    clock = options.fakeClock ? new FakeClock() : undefined;
    h = await startGrpcHarness(clock ? { clock } : {});
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(1000) } });
  }

  function open(): HeartbeatStream {
    const stream = openHeartbeatStream(h.server.address);
    streams.push(stream);
    return stream;
  }

  async function leaseOne(visibilityMs = 1000) {
    await h.rpc.send({ queue: "jobs", body: Buffer.from("work") });
    const [message] = (await h.rpc.receive({ queue: "jobs", visibilityTimeout: durationFromMs(visibilityMs) }))
      .messages;
    return message!;
  }

  async function stats() {
    return (await h.rpc.getQueue({ name: "jobs" })).queue!.stats!;
  }

  it("keeps a message hidden far past its visibility timeout while renewals go on", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne();
    const stream = open();
    for (let step = 0; step < 20; step++) {
      stream.send({ queue: "jobs", leases: [{ receiptHandle: message.receiptHandle }] });
      const { leases } = await stream.next();
      expect(leases[0]).toMatchObject({ receiptHandle: message.receiptHandle, held: true, reason: "" });
      expect(timestampMs(leases[0]!.leaseDeadline!)).toBe(clock!.now() + 1000);
      clock!.advance(600);
      expect((await h.rpc.receive({ queue: "jobs" })).messages).toEqual([]);
    }
    // 12 s on, ten times the timeout, still one delivery, still held.
    await h.rpc.delete({ queue: "jobs", receiptHandle: message.receiptHandle });
    expect(await stats()).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("reports a superseded handle as LEASE_SUPERSEDED and changes nothing, without ending the stream", async () => {
    await start({ fakeClock: true });
    const first = await leaseOne();
    clock!.advance(1000);
    const [second] = (await h.rpc.receive({ queue: "jobs", visibilityTimeout: durationFromMs(5000) })).messages;
    const stream = open();
    stream.send({
      queue: "jobs",
      leases: [
        { receiptHandle: first.receiptHandle },
        { receiptHandle: second!.receiptHandle, visibilityTimeout: durationFromMs(9000) },
      ],
    });
    const { leases } = await stream.next();
    expect(leases.map((l) => [l.held, l.reason])).toEqual([
      [false, "LEASE_SUPERSEDED"],
      [true, ""],
    ]);
    expect(timestampMs(leases[1]!.leaseDeadline!)).toBe(clock!.now() + 9000);
    // The superseded renewal did not shorten or release the current lease.
    clock!.advance(5000);
    expect((await h.rpc.receive({ queue: "jobs" })).messages).toEqual([]);
  });

  it("pushes LEASE_EXPIRED when a tracked lease runs out unrenewed", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne();
    const stream = open();
    stream.send({
      queue: "jobs",
      leases: [{ receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(2000) }],
    });
    await stream.next();
    const unsolicited = stream.next();
    clock!.advance(2000);
    const { leases } = await unsolicited;
    expect(leases.map((l) => [l.receiptHandle, l.held, l.reason])).toEqual([
      [message.receiptHandle, false, "LEASE_EXPIRED"],
    ]);
  });

  it("stores a checkpoint that survives a restart and arrives on the next delivery, and fails one over 64 KiB", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne();
    const stream = open();
    stream.send({
      queue: "jobs",
      leases: [{ receiptHandle: message.receiptHandle, checkpoint: Buffer.from("step 3 of 7") }],
    });
    expect((await stream.next()).leases[0]!.held).toBe(true);
    stream.send({
      queue: "jobs",
      leases: [{ receiptHandle: message.receiptHandle, checkpoint: Buffer.alloc(64 * 1024 + 1) }],
    });
    expect((await stream.next()).leases[0]).toMatchObject({ held: false, reason: "INVALID_ARGUMENT" });
    stream.close();
    await h.restart();
    clock!.advance(1000);
    const [again] = (await h.rpc.receive({ queue: "jobs" })).messages;
    expect(again!.receiveCount).toBe(2);
    expect(Buffer.from(again!.checkpoint!).toString()).toBe("step 3 of 7");
    // A message that never saved one carries none.
    await h.rpc.send({ queue: "jobs", body: Buffer.from("fresh") });
    const [fresh] = (await h.rpc.receive({ queue: "jobs" })).messages;
    expect(fresh!.checkpoint).toBeUndefined();
  });

  it("a renewal of 0 releases the message at once", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne(60_000);
    const stream = open();
    stream.send({
      queue: "jobs",
      leases: [{ receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(0) }],
    });
    expect((await stream.next()).leases[0]).toMatchObject({ held: false, reason: "RELEASED" });
    expect((await h.rpc.receive({ queue: "jobs" })).messages[0]!.messageId).toBe(message.messageId);
  });

  it("fails a renewal with a bad duration alone, and ends the stream for an unknown queue", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne();
    const stream = open();
    stream.send({
      queue: "jobs",
      leases: [
        { receiptHandle: "nonsense" },
        { receiptHandle: message.receiptHandle, visibilityTimeout: { seconds: -5n, nanos: 0 } },
        { receiptHandle: message.receiptHandle },
      ],
    });
    expect((await stream.next()).leases.map((l) => l.reason)).toEqual([
      "RECEIPT_HANDLE_INVALID",
      "INVALID_ARGUMENT",
      "",
    ]);
    stream.send({ queue: "no-such-queue", leases: [] });
    const error = await stream.closed;
    expect({ code: error?.code, reason: error?.reason }).toEqual({ code: status.NOT_FOUND, reason: "QUEUE_NOT_FOUND" });
  });

  it("ends the stream with INVALID_ARGUMENT for more than 1000 renewals", async () => {
    await start({ fakeClock: true });
    const stream = open();
    stream.send({ queue: "jobs", leases: Array.from({ length: 1001 }, () => ({ receiptHandle: "x" })) });
    const error = await stream.closed;
    expect({ code: error?.code, reason: error?.reason }).toEqual({
      code: status.INVALID_ARGUMENT,
      reason: "INVALID_ARGUMENT",
    });
  });

  it("a clean half-close leaves the leases as they were", async () => {
    await start({ fakeClock: true });
    const message = await leaseOne();
    const stream = open();
    stream.send({
      queue: "jobs",
      releaseOnDisconnect: true,
      leases: [{ receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(30_000) }],
    });
    await stream.next();
    stream.end();
    expect(await stream.closed).toBeUndefined();
    expect(await stats()).toMatchObject({ inFlight: 1n, visible: 0n });
  });

  it("a cancelled release_on_disconnect stream makes its leases visible at once", async () => {
    await start({ fakeClock: false });
    const message = await leaseOne(30_000);
    const stream = open();
    stream.send({
      queue: "jobs",
      releaseOnDisconnect: true,
      leases: [{ receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(30_000) }],
    });
    await stream.next();
    const poll = h.rpc.receive({ queue: "jobs", waitTime: durationFromMs(5000) });
    stream.cancel();
    const started = performance.now();
    const { messages } = await poll;
    expect(messages[0]!.messageId).toBe(message.messageId);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("a stream whose deadline passes ends with DEADLINE_EXCEEDED and releases its leases if asked", async () => {
    await start({ fakeClock: false });
    const message = await leaseOne(30_000);
    const stream = openHeartbeatStream(h.server.address, {}, new Date(Date.now() + 500));
    streams.push(stream);
    stream.send({
      queue: "jobs",
      releaseOnDisconnect: true,
      leases: [{ receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(30_000) }],
    });
    await stream.next();
    expect((await stream.closed)?.code).toBe(status.DEADLINE_EXCEEDED);
    const { messages } = await h.rpc.receive({ queue: "jobs", waitTime: durationFromMs(2000) });
    expect(messages[0]?.messageId).toBe(message.messageId);
  });

  it("a consumer killed with SIGKILL on a release_on_disconnect stream loses its leases to another consumer within a second", async () => {
    await start({ fakeClock: false });
    await h.rpc.sendBatch({ queue: "jobs", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
    const holder = spawn(process.execPath, [holdLeasesScript, h.server.address, "jobs", "2"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(holder.stdout!, "data")) as [Buffer];
    const held = JSON.parse(line.toString()) as { held: number; messageIds: string[] };
    expect(held.held).toBe(2);
    expect(await stats()).toMatchObject({ inFlight: 2n, visible: 0n });

    holder.kill("SIGKILL");
    await once(holder, "exit");
    const started = performance.now();
    const { messages } = await h.rpc.receive({ queue: "jobs", maxMessages: 10, waitTime: durationFromMs(5000) });
    const elapsed = performance.now() - started;
    expect(messages.map((m) => m.messageId).sort()).toEqual([...held.messageIds].sort());
    expect(elapsed).toBeLessThan(1000);
  });

  it("tolerates client keepalive pings on an idle stream", async () => {
    await start({ fakeClock: false });
    const message = await leaseOne(30_000);
    const stream = openHeartbeatStream(h.server.address, {
      // Far more often than the every-10-seconds clients are promised.
      "grpc.keepalive_time_ms": 500,
      "grpc.keepalive_timeout_ms": 1000,
      "grpc.keepalive_permit_without_calls": 1,
    });
    streams.push(stream);
    const renewal = { receiptHandle: message.receiptHandle, visibilityTimeout: durationFromMs(30_000) };
    stream.send({ queue: "jobs", leases: [renewal] });
    await stream.next();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    stream.send({ queue: "jobs", leases: [renewal] });
    expect((await stream.next()).leases[0]!.held).toBe(true);
  });
});

describe("Heartbeat flow control", () => {
  it("stops reading requests while the client does not read responses, and loses none", async () => {
    // fsync is not what this test is about; "os" keeps thousands of commits quick.
    const h = await startGrpcHarness({ durability: "os" });
    try {
      await h.rpc.createQueue({ name: "jobs" });
      await h.rpc.send({ queue: "jobs", body: Buffer.from("x") });
      const [message] = (await h.rpc.receive({ queue: "jobs" })).messages;
      const stream = openHeartbeatStream(h.server.address);
      stream.pause();
      // The server stops after about 1,900 answers on Node 22 and 24 (970 on
      // Node 20, whose streams' default highWaterMark was 16 KiB, not 64 KiB),
      // however many requests wait: 6,000 leave it far short of half.
      const requests = 6000;
      const payload = {
        queue: "jobs",
        leases: [{ receiptHandle: message!.receiptHandle, checkpoint: Buffer.alloc(1024) }],
      };
      for (let i = 0; i < requests; i++) stream.send(payload);
      // Nobody reads: the server answers until the transport's windows fill,
      // then stops taking requests. Wait until the count of commits settles.
      let settled = -1;
      for (let sample = 0; sample < 40; sample++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const commits = h.serverOf("jobs").store.commitStats.commits;
        if (commits === settled) break;
        settled = commits;
      }
      expect(h.serverOf("jobs").store.commitStats.commits).toBe(settled);
      expect(settled).toBeLessThan(requests / 2);
      // Reading again resumes the stream: every request gets its answer.
      for (let i = 0; i < requests; i++) expect((await stream.next()).leases[0]!.held).toBe(true);
      stream.close();
    } finally {
      await h.stop();
    }
  });
});
