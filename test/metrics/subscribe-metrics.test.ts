// The Subscribe metrics of a real broker, scraped from its metrics listener
// while a real stream consumes: subscribers open, deliveries pushed, acks
// taken on streams, and the times a stream's credit ran out; and Heartbeat
// streams counted apart from Subscribe streams.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { parseExposition, sampleValue, type Sample } from "../support/prometheus-text.js";
import { openSubscribeStream, probeSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";

const jobs = { queue: "jobs" };

describe("Subscribe metrics", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness({ metricsListen: "127.0.0.1:0" });
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(60_000) } });
  });
  afterEach(async () => {
    await h.stop();
  });

  const scrape = async (): Promise<Sample[]> =>
    parseExposition(await (await fetch(`http://${h.server.metricsAddress}/metrics`)).text());

  /** The Subscribe series of queue jobs, and the two stream gauges. */
  async function figures() {
    const samples = await scrape();
    return {
      subscribers: sampleValue(samples, "holdshelf_subscribers"),
      heartbeatStreams: sampleValue(samples, "holdshelf_heartbeat_streams"),
      pushed: sampleValue(samples, "holdshelf_messages_pushed_total", jobs),
      received: sampleValue(samples, "holdshelf_messages_received_total", jobs),
      acks: sampleValue(samples, "holdshelf_stream_acks_total", jobs),
      creditWaits: sampleValue(samples, "holdshelf_subscriber_credit_waits_total", jobs),
    };
  }

  /** Acks on the stream in one request, and waits for their confirmations. */
  async function ack(stream: SubscribeStream, handles: string[]): Promise<void> {
    stream.send({ ackReceiptHandles: handles });
    let { acks } = await stream.next();
    while (acks.length === 0) ({ acks } = await stream.next());
    expect(acks.map((result) => result.reason)).toEqual(handles.map(() => ""));
  }

  it("count subscribers, pushes, stream acks and credit waits as a stream consumes", async () => {
    expect(await figures()).toEqual({
      subscribers: 0,
      heartbeatStreams: 0,
      pushed: 0,
      received: 0,
      acks: 0,
      creditWaits: 0,
    });
    for (let i = 0; i < 5; i++) await h.rpc.send({ queue: "jobs", body: Buffer.from(`m${i}`) });
    const stream = openSubscribeStream(h.server.address, undefined, { deadlineMs: 15_000 });
    try {
      stream.send({ queue: "jobs", flowControl: { maxOutstandingMessages: 2 } });
      const first = await stream.deliveries(2);
      await probeSubscribeStream(stream);
      // Two pushed (deliveries, so received too), and the credit of 2 is spent: one wait.
      expect(await figures()).toEqual({
        subscribers: 1,
        heartbeatStreams: 0,
        pushed: 2,
        received: 2,
        acks: 0,
        creditWaits: 1,
      });

      await ack(
        stream,
        first.map((message) => message.receiptHandle),
      );
      const second = await stream.deliveries(2);
      await probeSubscribeStream(stream);
      expect(await figures()).toMatchObject({ pushed: 4, received: 4, acks: 2, creditWaits: 2 });

      await ack(
        stream,
        second.map((message) => message.receiptHandle),
      );
      const [last] = await stream.deliveries(1);
      await probeSubscribeStream(stream);
      // One message left: the stream holds 1 of its 2, so its credit did not run out again.
      expect(await figures()).toMatchObject({ subscribers: 1, pushed: 5, received: 5, acks: 4, creditWaits: 2 });

      // An ack that deletes nothing is still an ack the stream took.
      await ack(stream, [last!.receiptHandle]);
      expect(await figures()).toMatchObject({ acks: 5 });
      await ack(stream, [last!.receiptHandle]);
      expect(await figures()).toMatchObject({ acks: 6, pushed: 5 });
      stream.end();
      expect(await stream.closed).toBeUndefined();
      await expect.poll(async () => (await figures()).subscribers).toBe(0);
    } finally {
      stream.close();
    }
  });

  it("count Heartbeat streams apart from Subscribe streams", async () => {
    const subscriber = openSubscribeStream(h.server.address, undefined, { deadlineMs: 15_000 });
    subscriber.send({ queue: "jobs" });
    await probeSubscribeStream(subscriber);
    expect(await figures()).toMatchObject({ subscribers: 1, heartbeatStreams: 0 });
    const heartbeat = openHeartbeatStream(h.server.address);
    try {
      heartbeat.send({ queue: "jobs", leases: [] });
      await heartbeat.next();
      expect(await figures()).toMatchObject({ subscribers: 1, heartbeatStreams: 1 });
      subscriber.end();
      expect(await subscriber.closed).toBeUndefined();
      await expect.poll(async () => (await figures()).subscribers).toBe(0);
      expect(await figures()).toMatchObject({ heartbeatStreams: 1 });
    } finally {
      subscriber.close();
      heartbeat.close();
    }
  });
});
