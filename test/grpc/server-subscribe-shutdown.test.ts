// A broker that stops ends its Subscribe streams with SHUTTING_DOWN
// (UNAVAILABLE: open a new stream), and leaves their leases as they are,
// release_on_disconnect or not: the receipt handles the consumers hold still
// renew and ack on a new stream after the restart. Runs on every store and
// through the three-broker cluster (where the entry broker stops first).
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openSubscribeStream, probeSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";

describe("a broker shutdown under Subscribe streams", () => {
  let h: GrpcHarness;
  const streams: SubscribeStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  function open(first: Parameters<SubscribeStream["send"]>[0]): SubscribeStream {
    const stream = openSubscribeStream(h.server.address, undefined, { deadlineMs: 30_000 });
    streams.push(stream);
    stream.send(first);
    return stream;
  }

  async function stats() {
    return (await h.rpc.getQueue({ name: "jobs" })).queue!.stats!;
  }

  it("ends every open stream with SHUTTING_DOWN, and their handles renew and ack on a new stream after the restart", async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(60_000) } });
    for (const body of ["a", "b", "c"]) await h.rpc.send({ queue: "jobs", body: Buffer.from(body) });
    const releasing = open({ queue: "jobs", releaseOnDisconnect: true, flowControl: { maxOutstandingMessages: 2 } });
    const held = await releasing.deliveries(2);
    const keeping = open({ queue: "jobs", flowControl: { maxOutstandingMessages: 1 } });
    held.push(...(await keeping.deliveries(1)));
    // One stream waits with credit to spare, one has spent it: both end alike.
    const idle = open({ queue: "jobs" });
    await probeSubscribeStream(idle);

    await h.restart();

    for (const stream of [releasing, keeping, idle]) {
      const error = await stream.closed;
      expect({ code: error?.code, reason: error?.reason }).toEqual({
        code: status.UNAVAILABLE,
        reason: "SHUTTING_DOWN",
      });
    }
    // An end by the server is not a break: release_on_disconnect released nothing.
    expect(await stats()).toMatchObject({ visible: 0n, inFlight: 3n });

    // The reconnecting consumer names the leases it holds in its new stream's first request, then acks them.
    const handles = held.map((message) => message.receiptHandle);
    const again = open({
      queue: "jobs",
      flowControl: { maxOutstandingMessages: 3 },
      leases: handles.map((receiptHandle) => ({ receiptHandle, visibilityTimeout: durationFromMs(30_000) })),
    });
    const renewed = await again.next();
    expect(renewed.leases.map((lease) => [lease.receiptHandle, lease.held, lease.reason])).toEqual(
      handles.map((handle) => [handle, true, ""]),
    );
    again.send({ ackReceiptHandles: handles });
    let { acks } = await again.next();
    while (acks.length === 0) ({ acks } = await again.next());
    expect(acks.map((ack) => [ack.receiptHandle, ack.reason])).toEqual(handles.map((handle) => [handle, ""]));
    expect(await stats()).toMatchObject({ visible: 0n, inFlight: 0n, delayed: 0n });
    again.end();
    expect(await again.closed).toBeUndefined();
  });
});
