import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { sleep } from "../support/wait.js";

// A consumer that stops pauses its stream with a credit of 0 while the
// stream waits for messages (test/client/consumer-fifo.test.ts found the
// wait taking one after the pause). Real time: the wait is the broker's.
describe("a Subscribe stream paused while it waits for messages", () => {
  let h: GrpcHarness;
  let stream: SubscribeStream;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "jobs" });
  });
  afterEach(async () => {
    stream.close();
    await h.stop();
  });

  /** Sends a renewal and waits for its answer: every request before it has been read. */
  const roundTrip = async () => {
    stream.send({ leases: [{ receiptHandle: "not-a-handle" }] });
    for (;;) if ((await stream.next()).leases.length > 0) return;
  };

  it("takes nothing once paused, and delivers once the credit is raised again", async () => {
    stream = openSubscribeStream(h.server.address);
    stream.send({ queue: "jobs", flowControl: { maxOutstandingMessages: 5 } });
    await roundTrip();
    stream.send({ flowControl: { maxOutstandingMessages: 0 } });
    await roundTrip();
    await h.rpc.send({ queue: "jobs", body: Buffer.from("after the pause") });
    await sleep(300);
    expect((await h.rpc.getQueue({ name: "jobs" })).queue!.stats).toMatchObject({ visible: 1n, inFlight: 0n });
    stream.send({ flowControl: { maxOutstandingMessages: 1 } });
    const [delivered] = await stream.deliveries(1);
    expect(Buffer.from(delivered!.body).toString()).toBe("after the pause");
  });
});
