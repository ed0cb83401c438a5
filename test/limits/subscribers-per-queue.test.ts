// --max-subscribers-per-queue against a real broker: Subscribe streams past
// the limit on one queue are refused with TOO_MANY_SUBSCRIBERS, other queues
// keep their own room, and a stream that ends (half-closed or cancelled)
// frees its place.
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSubscribeStream, probeSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { startLimitsHarness, type LimitsHarness } from "./limits-harness.js";

describe("Subscribe streams per queue", () => {
  let h: LimitsHarness;
  const streams: SubscribeStream[] = [];
  beforeEach(async () => {
    h = await startLimitsHarness({ maxSubscribersPerQueue: 2 });
    const admin = h.connect();
    await admin.createQueue({ name: "a" });
    await admin.createQueue({ name: "b" });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  function open(queue: string): SubscribeStream {
    const stream = openSubscribeStream(h.server.address, undefined, { deadlineMs: 15_000 });
    streams.push(stream);
    stream.send({ queue });
    return stream;
  }

  async function admitted(queue: string): Promise<SubscribeStream> {
    const stream = open(queue);
    await probeSubscribeStream(stream);
    return stream;
  }

  async function refused(queue: string): Promise<void> {
    const error = await open(queue).closed;
    expect({ code: error?.code, reason: error?.reason }).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      reason: "TOO_MANY_SUBSCRIBERS",
    });
    expect(error?.message).toContain("--max-subscribers-per-queue 2");
  }

  it("refuses a third stream on a queue with TOO_MANY_SUBSCRIBERS, and takes one on another queue", async () => {
    const onA = [await admitted("a"), await admitted("a")];
    await refused("a");
    const onB = await admitted("b");
    // The refused stream took no place: two on a, one on b.
    expect(h.server.broker.streams.subscriberCount).toBe(3);
    // The admitted streams still work after the refusal.
    for (const stream of [...onA, onB]) await probeSubscribeStream(stream);
  });

  it("makes room when a stream half-closes, and when one is cancelled", async () => {
    const [first, second] = [await admitted("a"), await admitted("a")];
    await refused("a");
    first!.end();
    expect(await first!.closed).toBeUndefined();
    const third = await admitted("a");
    await refused("a");

    second!.cancel();
    // The broker hears of the cancel a moment after the client: until then the place is still taken.
    await expect.poll(() => h.server.broker.streams.subscriberCount, { timeout: 10_000 }).toBe(1);
    await admitted("a");
    await refused("a");
    await probeSubscribeStream(third);
  });
});
