import { create, toBinary } from "@bufbuild/protobuf";
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { SubscribeRequestSchema } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { DeleteOutcome } from "../../gen/holdshelf/v1/message_pb.js";
import { connect, grpcFrame, openCall } from "../hostile/raw-wire.js";
import { afterEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { inCluster } from "../support/test-storage.js";

// Runs on every store and through the three-broker cluster (where the entry
// broker serves no queue, so every stream is passed to its owner whole).
describe("the Subscribe stream", () => {
  let h: GrpcHarness;
  let clock: FakeClock | undefined;
  const streams: SubscribeStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  async function start(options: { fakeClock: boolean; config?: object }): Promise<void> {
    clock = options.fakeClock ? new FakeClock() : undefined;
    h = await startGrpcHarness(clock ? { clock } : {});
    await h.rpc.createQueue({
      name: "jobs",
      config: { visibilityTimeout: durationFromMs(1000), ...options.config },
    });
  }

  function open(): SubscribeStream {
    const stream = openSubscribeStream(h.server.address);
    streams.push(stream);
    return stream;
  }

  async function send(...bodies: string[]): Promise<void> {
    for (const body of bodies) await h.rpc.send({ queue: "jobs", body: Buffer.from(body) });
  }

  async function stats() {
    return (await h.rpc.getQueue({ name: "jobs" })).queue!.stats!;
  }

  /** Opens a stream whose first request has been served (a settled renewal proves it). */
  async function subscribed(first: Parameters<SubscribeStream["send"]>[0]): Promise<SubscribeStream> {
    const stream = open();
    stream.send(first);
    return stream;
  }

  it("pushes a message sent after it opened, leased for the stream's visibility timeout", async () => {
    await start({ fakeClock: false });
    const stream = await subscribed({ queue: "jobs", visibilityTimeout: durationFromMs(30_000) });
    // A unary round trip after the open: the stream waits by now, or its first request is on the way.
    await stats();
    await send("first");
    const [message] = await stream.deliveries(1);
    expect(Buffer.from(message!.body).toString()).toBe("first");
    expect(message!.receiveCount).toBe(1);
    expect(timestampMs(message!.leaseDeadline!) - Date.now()).toBeGreaterThan(25_000);
    expect(await stats()).toMatchObject({ visible: 0n, inFlight: 1n });
  });

  it("holds at most its credit, and an ack brings the next message", async () => {
    await start({ fakeClock: false });
    await send("a", "b", "c", "d", "e");
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 2 } });
    const first = await stream.deliveries(2);
    expect(first).toHaveLength(2);
    expect(await stats()).toMatchObject({ visible: 3n, inFlight: 2n });
    stream.send({ ackReceiptHandles: [first[0]!.receiptHandle] });
    const answers: string[] = [];
    const more: string[] = [];
    while (answers.length < 1 || more.length < 1) {
      const response = await stream.next();
      answers.push(...response.acks.map((ack) => `${ack.receiptHandle === first[0]!.receiptHandle}:${ack.reason}`));
      more.push(...response.messages.map((message) => Buffer.from(message.body).toString()));
    }
    expect(answers).toEqual(["true:"]);
    expect(more).toEqual(["c"]);
    expect(await stats()).toMatchObject({ visible: 2n, inFlight: 2n });
  });

  it("confirms each ack with its outcome: deleted, superseded, or a handle it cannot read", async () => {
    await start({ fakeClock: true });
    await send("a", "b");
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 1 } });
    const [a] = await stream.deliveries(1);
    // The lease runs out; the message comes back on the same stream as a new delivery.
    const notice = stream.next();
    clock!.advance(1000);
    expect((await notice).leases.map((l) => [l.receiptHandle, l.held, l.reason])).toEqual([
      [a!.receiptHandle, false, "LEASE_EXPIRED"],
    ]);
    const [again] = await stream.deliveries(1);
    expect(again!.receiveCount).toBe(a!.messageId === again!.messageId ? 2 : 1);
    stream.send({ ackReceiptHandles: [again!.receiptHandle, "not-a-handle"] });
    let acks = (await stream.next()).acks;
    while (acks.length === 0) acks = (await stream.next()).acks;
    expect(acks.map((ack) => [ack.reason, ack.deleteOutcome])).toEqual([
      ["", DeleteOutcome.DELETED],
      ["RECEIPT_HANDLE_INVALID", DeleteOutcome.UNSPECIFIED],
    ]);
    if (a!.messageId === again!.messageId) {
      stream.send({ ackReceiptHandles: [a!.receiptHandle] });
      let late = (await stream.next()).acks;
      while (late.length === 0) late = (await stream.next()).acks;
      // The first delivery's handle was superseded by the second's, which deleted the message: it is gone,
      // and the ack says it came too late.
      expect(late.map((ack) => [ack.reason, ack.deleteOutcome])).toEqual([["", DeleteOutcome.RECEIVED_AGAIN]]);
    }
  });

  it("renews, fails and releases leases on the stream, with checkpoints, answering each in order", async () => {
    await start({ fakeClock: true });
    await send("a", "b");
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 2 } });
    const [a, b] = await stream.deliveries(2);
    stream.send({
      leases: [
        { receiptHandle: a!.receiptHandle, visibilityTimeout: durationFromMs(5000), checkpoint: Buffer.from("step-3") },
        { receiptHandle: b!.receiptHandle, failed: true, visibilityTimeout: durationFromMs(60_000) },
      ],
    });
    const { leases } = await stream.next();
    expect(leases.map((l) => [l.receiptHandle, l.held, l.reason])).toEqual([
      [a!.receiptHandle, true, ""],
      [b!.receiptHandle, false, "RELEASED"],
    ]);
    expect(timestampMs(leases[0]!.leaseDeadline!)).toBe(clock!.now() + 5000);
    // b waits out its retry delay; a is held past the stream's 1 s visibility timeout.
    clock!.advance(4000);
    expect(await stats()).toMatchObject({ visible: 0n, inFlight: 1n, delayed: 1n });
    stream.send({ leases: [{ receiptHandle: a!.receiptHandle, visibilityTimeout: durationFromMs(0) }] });
    const released = await stream.next();
    expect(released.leases.map((l) => l.reason)).toEqual(["RELEASED"]);
    // Released at once, a comes back to this stream (its credit is free again) with its checkpoint.
    let redelivered = released.messages;
    while (redelivered.length === 0) redelivered = (await stream.next()).messages;
    expect(redelivered[0]!.messageId).toBe(a!.messageId);
    expect(Buffer.from(redelivered[0]!.checkpoint!).toString()).toBe("step-3");
    expect(redelivered[0]!.receiveCount).toBe(2);
  });

  it("pauses at a credit of 0 and delivers once a later request raises it", async () => {
    await start({ fakeClock: false });
    await send("a");
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 0 } });
    // A renewal's answer proves the stream open, and nothing came before it.
    stream.send({ leases: [{ receiptHandle: "not-a-handle" }] });
    const answer = await stream.next();
    expect(answer.messages).toEqual([]);
    expect(answer.leases.map((l) => l.reason)).toEqual(["RECEIPT_HANDLE_INVALID"]);
    expect(await stats()).toMatchObject({ visible: 1n, inFlight: 0n });
    stream.send({ flowControl: { maxOutstandingMessages: 1 } });
    expect(await stream.deliveries(1)).toHaveLength(1);
  });

  it("a byte credit stops deliveries once the held bodies reach it, but a message larger than it still comes alone", async () => {
    await start({ fakeClock: false });
    await send("x".repeat(600), "y".repeat(600), "z".repeat(600));
    const stream = await subscribed({
      queue: "jobs",
      flowControl: { maxOutstandingMessages: 10, maxOutstandingBytes: 500n },
    });
    const [first] = await stream.deliveries(1);
    expect(first!.body.length).toBe(600);
    // Over the byte credit: nothing more until the ack.
    stream.send({ leases: [{ receiptHandle: "not-a-handle" }] });
    expect((await stream.next()).messages).toEqual([]);
    expect(await stats()).toMatchObject({ inFlight: 1n, visible: 2n });
    stream.send({ ackReceiptHandles: [first!.receiptHandle] });
    expect(await stream.deliveries(1)).toHaveLength(1);
  });

  it("a half-close ends the stream OK and leaves its leases to run their course", async () => {
    await start({ fakeClock: false });
    await send("a");
    const stream = await subscribed({ queue: "jobs", releaseOnDisconnect: true });
    await stream.deliveries(1);
    stream.end();
    expect(await stream.closed).toBeUndefined();
    expect(await stats()).toMatchObject({ inFlight: 1n, visible: 0n });
  });

  it("a cancelled release_on_disconnect stream makes its leases visible at once", async () => {
    await start({ fakeClock: false });
    await send("a");
    const stream = await subscribed({
      queue: "jobs",
      releaseOnDisconnect: true,
      visibilityTimeout: durationFromMs(30_000),
    });
    const [message] = await stream.deliveries(1);
    const poll = h.rpc.receive({ queue: "jobs", waitTime: durationFromMs(5000) });
    stream.cancel();
    const { messages } = await poll;
    expect(messages[0]!.messageId).toBe(message!.messageId);
  });

  it("subscribers of one queue take turns", async () => {
    await start({ fakeClock: false });
    const first = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 100 } });
    const second = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 100 } });
    await stats();
    const got: Record<string, number> = { first: 0, second: 0 };
    const count = (name: string, stream: SubscribeStream) => async () => {
      for (;;) got[name]! += (await stream.next()).messages.length;
    };
    void count("first", first)();
    void count("second", second)();
    for (let i = 0; i < 20; i++) {
      await send(`m${i}`);
      // Each message is taken before the next is sent, so each send finds both waiting or one mid-write.
      await waitFor(() => got.first! + got.second! === i + 1);
    }
    expect(got.first).toBeGreaterThanOrEqual(5);
    expect(got.second).toBeGreaterThanOrEqual(5);
  });

  it("gives a FIFO group's messages to one subscriber at a time, in order", async () => {
    await start({ fakeClock: false });
    await h.rpc.createQueue({ name: "orders.fifo", config: { fifo: true, contentBasedDeduplication: true } });
    for (const body of ["g1-1", "g1-2", "g2-1"]) {
      await h.rpc.send({ queue: "orders.fifo", body: Buffer.from(body), messageGroupId: body.slice(0, 2) });
    }
    const first = open();
    first.send({ queue: "orders.fifo", flowControl: { maxOutstandingMessages: 10 } });
    const taken = await first.deliveries(3);
    // Both groups' messages, each group in order, in one stream: nothing was leased elsewhere.
    expect(taken.map((m) => Buffer.from(m.body).toString())).toEqual(["g1-1", "g1-2", "g2-1"]);
    const second = open();
    second.send({ queue: "orders.fifo", flowControl: { maxOutstandingMessages: 10 } });
    await h.rpc.send({ queue: "orders.fifo", body: Buffer.from("g1-3"), messageGroupId: "g1" });
    // g1-3 waits behind its group's leased messages: the second stream gets nothing.
    second.send({ leases: [{ receiptHandle: "not-a-handle" }] });
    expect((await second.next()).messages).toEqual([]);
    first.send({ ackReceiptHandles: [taken[0]!.receiptHandle, taken[1]!.receiptHandle] });
    const [next] = await firstDelivery([first, second]);
    expect(Buffer.from(next!.body).toString()).toBe("g1-3");
  });

  it("keeps to the queue's max_in_flight", async () => {
    await start({ fakeClock: false, config: { maxInFlight: 2 } });
    await send("a", "b", "c");
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 10 } });
    expect(await stream.deliveries(2)).toHaveLength(2);
    stream.send({ leases: [{ receiptHandle: "not-a-handle" }] });
    expect((await stream.next()).messages).toEqual([]);
    expect(await stats()).toMatchObject({ inFlight: 2n, visible: 1n });
  });

  it("a failure past max_receive_count dead-letters the message", async () => {
    await start({ fakeClock: false });
    await h.rpc.createQueue({ name: "jobs-dlq" });
    await h.rpc.createQueue({
      name: "work",
      config: { redrivePolicy: { deadLetterQueue: "jobs-dlq", maxReceiveCount: 1 } },
    });
    await h.rpc.send({ queue: "work", body: Buffer.from("poison") });
    const stream = open();
    stream.send({ queue: "work" });
    const [message] = await stream.deliveries(1);
    stream.send({ leases: [{ receiptHandle: message!.receiptHandle, failed: true }] });
    expect((await stream.next()).leases.map((l) => l.reason)).toEqual(["RELEASED"]);
    await h.settled();
    const { queue } = await h.rpc.getQueue({ name: "jobs-dlq" });
    expect(queue!.stats!.visible).toBe(1n);
  });

  it("a slow subscriber that stops reading holds its credit and no more", async () => {
    await start({ fakeClock: false });
    for (let i = 0; i < 50; i++) await send(`m${i}`);
    const stream = await subscribed({ queue: "jobs", flowControl: { maxOutstandingMessages: 5 } });
    stream.pause();
    await waitFor(async () => (await stats()).inFlight === 5n);
    expect(await stats()).toMatchObject({ inFlight: 5n, visible: 45n });
  });

  // Not through a forwarding broker: its grpc-js client reads up to 16 responses ahead from the owner, so
  // there the bound is the credit (the test above), not two responses.
  it.skipIf(inCluster)(
    "a client that stops reading stops the pushes: the broker takes two responses' messages, not its whole credit",
    async () => {
      await start({ fakeClock: false });
      const body = Buffer.alloc(200 * 1024, 7);
      for (let batch = 0; batch < 8; batch++) {
        await h.rpc.sendBatch({ queue: "jobs", entries: Array.from({ length: 20 }, () => ({ body })) });
      }
      // A raw HTTP/2 stream that is never read: its flow-control window (64 KiB) fills, and the pushes wait.
      const session = await connect(h.server.address);
      try {
        const call = openCall(session, "Subscribe");
        const first = create(SubscribeRequestSchema, {
          queue: "jobs",
          visibilityTimeout: durationFromMs(60_000),
          flowControl: { maxOutstandingMessages: 1000 },
        });
        call.write(grpcFrame(toBinary(SubscribeRequestSchema, first)));
        call.pause();
        let held = -1n;
        await waitFor(async () => {
          const now = (await stats()).inFlight;
          const steady = now > 0n && now === held;
          held = now;
          if (!steady) await new Promise((resolve) => setTimeout(resolve, 300));
          return steady;
        });
        // Each response holds up to 4 MiB (20 of these); the credit would allow all 160.
        expect(held).toBeLessThanOrEqual(60n);
      } finally {
        session.destroy();
      }
    },
  );

  it("ends with QUEUE_NOT_FOUND when its queue is deleted", async () => {
    await start({ fakeClock: false });
    const stream = await subscribed({ queue: "jobs" });
    await stats();
    await h.rpc.deleteQueue({ name: "jobs" });
    expect((await stream.closed)?.reason).toBe("QUEUE_NOT_FOUND");
  });

  describe("refuses bad requests with INVALID_ARGUMENT or the queue's reason, ending the stream", () => {
    it.each([
      ["an unknown queue", { queue: "nope" }, "QUEUE_NOT_FOUND", "queue"],
      ["a first request without a queue", { flowControl: { maxOutstandingMessages: 1 } }, "INVALID_ARGUMENT", "queue"],
      ["a malformed queue name", { queue: "bad name!" }, "INVALID_ARGUMENT", "queue"],
      [
        "a visibility timeout of 0",
        { queue: "jobs", visibilityTimeout: durationFromMs(0) },
        "INVALID_ARGUMENT",
        "visibility_timeout",
      ],
      [
        "a credit over 10000",
        { queue: "jobs", flowControl: { maxOutstandingMessages: 10_001 } },
        "INVALID_ARGUMENT",
        "flow_control.max_outstanding_messages",
      ],
      [
        "a negative byte credit",
        { queue: "jobs", flowControl: { maxOutstandingMessages: 1, maxOutstandingBytes: -1n } },
        "INVALID_ARGUMENT",
        "flow_control.max_outstanding_bytes",
      ],
    ])("%s", async (_name, first, reason, field) => {
      await start({ fakeClock: false });
      const stream = open();
      stream.send(first as Parameters<SubscribeStream["send"]>[0]);
      const error = await stream.closed;
      expect(error?.reason).toBe(reason);
      if (reason === "INVALID_ARGUMENT") expect(error?.violations.map((v) => v.field)).toEqual([field]);
    });

    it("a later request naming another queue", async () => {
      await start({ fakeClock: false });
      await h.rpc.createQueue({ name: "other" });
      const stream = await subscribed({ queue: "jobs" });
      stream.send({ queue: "other" });
      expect((await stream.closed)?.reason).toBe("INVALID_ARGUMENT");
    });

    it("more than 1000 acks in one request", async () => {
      await start({ fakeClock: false });
      const stream = await subscribed({ queue: "jobs" });
      stream.send({ ackReceiptHandles: Array.from({ length: 1001 }, (_, i) => `h${i}`) });
      const error = await stream.closed;
      expect(error?.reason).toBe("INVALID_ARGUMENT");
      expect(error?.violations.map((v) => v.field)).toEqual(["ack_receipt_handles"]);
    });

    it("bytes that are not a SubscribeRequest", async () => {
      await start({ fakeClock: false });
      const stream = await subscribed({ queue: "jobs" });
      stream.sendBytes(Buffer.from([0x0a, 0xff]));
      const error = await stream.closed;
      expect(error?.reason).toBe("INVALID_ARGUMENT");
      expect(error?.violations.map((v) => v.field)).toEqual(["request"]);
    });
  });

  it("leaves the queue as it was after a refused stream", async () => {
    await start({ fakeClock: false });
    await send("a");
    const stream = open();
    stream.send({ queue: "jobs", flowControl: { maxOutstandingMessages: 1 }, visibilityTimeout: durationFromMs(0) });
    expect((await stream.closed)?.reason).toBe("INVALID_ARGUMENT");
    expect(await stats()).toMatchObject({ visible: 1n, inFlight: 0n });
  });
});

/** The first delivery any of the streams gets. */
function firstDelivery(streams: SubscribeStream[]) {
  return Promise.race(streams.map((stream) => stream.deliveries(1)));
}

/** Polls a condition every 5 ms for up to 10 s. */
async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in 10 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
