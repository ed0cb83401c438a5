// FIFO queues' group blocking over gRPC, where leases end in ways the broker
// rule tests do not reach: Heartbeat renewals, a release on the stream, a
// broken release_on_disconnect stream, and a restart of the broker on the
// same data. Each group's order must hold through every one of them.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream, type HeartbeatStream } from "../support/heartbeat-stream.js";
import { text } from "../support/text.js";

const visibilityMs = 1000;

describe("FIFO leases over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  const streams: HeartbeatStream[] = [];
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "f", config: { fifo: true, visibilityTimeout: durationFromMs(visibilityMs) } });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  function open(): HeartbeatStream {
    const stream = openHeartbeatStream(h.server.address);
    streams.push(stream);
    return stream;
  }

  /** Sends bodies whose first character names their group ("a1" to group a), each its own deduplication id. */
  async function send(...bodies: string[]): Promise<string[]> {
    const entries = bodies.map((body) => ({
      body: Buffer.from(body),
      messageGroupId: body[0]!,
      deduplicationId: body,
    }));
    return (await h.rpc.sendBatch({ queue: "f", entries })).messageIds;
  }

  async function receiveAll() {
    return (await h.rpc.receive({ queue: "f", maxMessages: 10 })).messages;
  }

  async function receiveFirst() {
    const [message] = (await h.rpc.receive({ queue: "f", maxMessages: 1 })).messages;
    return message!;
  }

  it("keeps a group blocked while Heartbeat renewals hold its lease far past the visibility timeout", async () => {
    await send("a1", "a2", "b1");
    const a1 = await receiveFirst();
    expect(text(a1)).toBe("a1");
    const stream = open();
    for (let step = 0; step < 5; step++) {
      stream.send({ queue: "f", leases: [{ receiptHandle: a1.receiptHandle }] });
      expect((await stream.next()).leases[0]).toMatchObject({ held: true, reason: "" });
      clock.advance(visibilityMs * 0.6);
      // Group b goes on (and is done with); group a gives nothing while a1 is held.
      const received = await receiveAll();
      expect(received.map(text)).toEqual(step === 0 ? ["b1"] : []);
      for (const message of received) await h.rpc.delete({ queue: "f", receiptHandle: message.receiptHandle });
    }
    await h.rpc.delete({ queue: "f", receiptHandle: a1.receiptHandle });
    expect((await receiveAll()).map(text)).toEqual(["a2"]);
  });

  it("puts a message released on the stream (visibility 0) back first in its group", async () => {
    await send("a1", "a2", "a3");
    const a1 = await receiveFirst();
    const stream = open();
    stream.send({ queue: "f", leases: [{ receiptHandle: a1.receiptHandle, visibilityTimeout: durationFromMs(0) }] });
    expect((await stream.next()).leases[0]).toMatchObject({ held: false, reason: "RELEASED" });
    const again = await receiveAll();
    expect(again.map(text)).toEqual(["a1", "a2", "a3"]);
    expect(again.map((m) => m.receiveCount)).toEqual([2, 1, 1]);
  });

  it("keeps a group blocked by a failed renewal until the retry backoff ends, the failed message first", async () => {
    await h.rpc.updateQueue({
      name: "f",
      config: {
        fifo: true,
        visibilityTimeout: durationFromMs(visibilityMs),
        retryPolicy: { minBackoff: durationFromMs(5000), maxBackoff: durationFromMs(5000) },
      },
    });
    await send("a1", "a2");
    const a1 = await receiveFirst();
    const stream = open();
    stream.send({ queue: "f", leases: [{ receiptHandle: a1.receiptHandle, failed: true }] });
    expect((await stream.next()).leases[0]).toMatchObject({ held: false, reason: "RELEASED" });
    clock.advance(4999);
    expect(await receiveAll()).toEqual([]);
    clock.advance(1);
    expect((await receiveAll()).map(text)).toEqual(["a1", "a2"]);
  });

  it("releases the leases of a broken release_on_disconnect stream, and the group comes back in order", async () => {
    await send("a1", "a2", "a3", "b1");
    const [a1, a2] = (await h.rpc.receive({ queue: "f", maxMessages: 2 })).messages;
    expect([a1, a2].map((m) => text(m!))).toEqual(["a1", "a2"]);
    const stream = open();
    stream.send({
      queue: "f",
      releaseOnDisconnect: true,
      leases: [a1, a2].map((m) => ({ receiptHandle: m!.receiptHandle, visibilityTimeout: durationFromMs(60_000) })),
    });
    expect((await stream.next()).leases.map((l) => l.held)).toEqual([true, true]);
    expect((await receiveAll()).map(text)).toEqual(["b1"]);
    // The fake clock stands still: only the break can end the 60 s leases, and this long poll waits for it.
    const poll = h.rpc.receive({ queue: "f", maxMessages: 10, waitTime: durationFromMs(20_000) });
    stream.cancel();
    const { messages } = await poll;
    expect(messages.map(text)).toEqual(["a1", "a2", "a3"]);
    expect(messages.map((m) => m.receiveCount)).toEqual([2, 2, 1]);
  });

  it("keeps order, blocking, sequence numbers and deduplication across a restart", async () => {
    const before = await h.rpc.sendBatch({
      queue: "f",
      entries: ["a1", "a2", "a3", "b1"].map((body) => ({
        body: Buffer.from(body),
        messageGroupId: body[0]!,
        deduplicationId: body,
      })),
    });
    const a1 = await receiveFirst();
    expect(text(a1)).toBe("a1");

    await h.restart();

    // A duplicate within the window is still answered with the first send, and stores nothing.
    const duplicate = await h.rpc.send({
      queue: "f",
      body: Buffer.from("again"),
      messageGroupId: "a",
      deduplicationId: "a2",
    });
    expect([duplicate.messageId, duplicate.sequenceNumber]).toEqual([before.messageIds[1], before.sequenceNumbers[1]]);
    expect((await h.rpc.getQueue({ name: "f" })).queue!.stats).toMatchObject({ visible: 3n, inFlight: 1n });
    // a1's lease came back with the broker: group a stays blocked, b is served.
    const [b1, ...more] = await receiveAll();
    expect([text(b1!), more]).toEqual(["b1", []]);
    await h.rpc.delete({ queue: "f", receiptHandle: b1!.receiptHandle });
    clock.advance(visibilityMs);
    const again = await receiveAll();
    expect(again.map(text)).toEqual(["a1", "a2", "a3"]);
    expect(again.map((m) => m.sequenceNumber)).toEqual(before.sequenceNumbers.slice(0, 3));
    // New sends go on numbering after the old ones.
    const after = await h.rpc.send({ queue: "f", body: Buffer.from("a4"), messageGroupId: "a", deduplicationId: "a4" });
    expect(after.sequenceNumber > before.sequenceNumbers[3]!).toBe(true);
  });
});
