// Heartbeat streams in cluster mode: a client's stream to broker A renews
// leases of queues B owns over A's own stream to B, answers still in order,
// B's expiry notices passed on, and B's stream ending as the client's does.
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Server, ServerCredentials, status, type ServerDuplexStream } from "@grpc/grpc-js";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  HeartbeatResponseSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";
import { openHeartbeatStream, type HeartbeatStream } from "../support/heartbeat-stream.js";
import { deadPeer, describeForwarding, posingAsBroker, startBroker, type TestBroker } from "./forwarding-harness.js";

describeForwarding("Heartbeat through a broker that does not own the queue", () => {
  let a: TestBroker;
  let b: TestBroker;
  const streams: HeartbeatStream[] = [];
  beforeEach(async () => {
    [a, b] = await Promise.all([startBroker("a"), startBroker("b")]);
    a.router.send(b.peer, "remote");
    await b.rpc.createQueue({ name: "remote" });
    await a.rpc.createQueue({ name: "local" });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await Promise.all([a.stop(), b.stop()]);
  });

  function open(broker: TestBroker, options: Parameters<typeof openHeartbeatStream>[1] = {}): HeartbeatStream {
    const stream = openHeartbeatStream(broker.peer.address, options);
    streams.push(stream);
    return stream;
  }

  /** Sends a message to `queue` at its owner and leases it there; returns the receipt handle. */
  async function lease(owner: TestBroker, queue: string, visibilityMs = 30_000): Promise<string> {
    await owner.rpc.send({ queue, body: Buffer.from("work") });
    const [message] = (await owner.rpc.receive({ queue, visibilityTimeout: durationFromMs(visibilityMs) })).messages;
    return message!.receiptHandle;
  }

  it("renews a lease of another broker's queue at its owner", async () => {
    const handle = await lease(b, "remote");
    const stream = open(a);
    const before = Date.now();
    stream.send({ queue: "remote", leases: [{ receiptHandle: handle, visibilityTimeout: durationFromMs(120_000) }] });
    const { leases } = await stream.next();
    expect(leases).toEqual([expect.objectContaining({ receiptHandle: handle, held: true, reason: "" })]);
    expect(timestampMs(leases[0]!.leaseDeadline!)).toBeGreaterThanOrEqual(before + 120_000);
    // The owner holds the renewal on a stream of its own (A's), and A tracks nothing itself.
    expect(b.server.broker.streams.count).toBe(1);
    // The lease now outlasts a 30 s one: a change of 0 s would release it, a renewal past 12 h is refused.
    stream.send({ queue: "remote", leases: [{ receiptHandle: "AAAA" }] });
    expect((await stream.next()).leases).toEqual([
      expect.objectContaining({ receiptHandle: "AAAA", held: false, reason: "RECEIPT_HANDLE_INVALID" }),
    ]);
    stream.end();
    expect(await stream.closed).toBeUndefined();
  });

  it("answers requests on local and remote queues in the order they came", async () => {
    const handles = [
      await lease(a, "local"),
      await lease(b, "remote"),
      await lease(a, "local"),
      await lease(b, "remote"),
    ];
    const queues = ["local", "remote", "local", "remote"];
    const stream = open(a);
    // Written at once: the remote answers take a hop more, yet come back in order.
    for (let round = 0; round < 3; round++) {
      handles.forEach((receiptHandle, index) => {
        stream.send({ queue: queues[index]!, leases: [{ receiptHandle }] });
      });
    }
    for (let round = 0; round < 3; round++) {
      for (const handle of handles) {
        expect((await stream.next()).leases).toEqual([expect.objectContaining({ receiptHandle: handle, held: true })]);
      }
    }
    stream.send({ queue: "remote", leases: [] });
    expect((await stream.next()).leases).toEqual([]);
  });

  it("sends requests on to the owner as they come, so that the owner does not hold one back for company while another waits", async () => {
    // B lets a lone renewal wait a minute for another stream's to share its write, but never one with a request behind it.
    const lingering = await startBroker("b-lingering", { renewalLinger: { lingerMs: 60_000, minStreams: 1 } });
    try {
      a.router.send(lingering.peer, "slow");
      await lingering.rpc.createQueue({ name: "slow" });
      const handle = await lease(lingering, "slow");
      const stream = open(a);
      stream.send({ queue: "slow", leases: [{ receiptHandle: handle }] });
      stream.send({ queue: "slow", leases: [{ receiptHandle: handle }] });
      const first = await Promise.race([
        stream.next(),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000)),
      ]);
      expect(first?.leases[0]).toMatchObject({ receiptHandle: handle, held: true });
      // The second, with nothing behind it, waits for company: a Send's write takes it along.
      let answered = false;
      const second = stream.next().finally(() => (answered = true));
      while (!answered) {
        await lingering.rpc.send({ queue: "slow", body: Buffer.from("company") });
        await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 50))]);
      }
      expect((await second).leases[0]).toMatchObject({ receiptHandle: handle, held: true });
    } finally {
      await lingering.stop();
    }
  });

  it("passes on the owner's LEASE_EXPIRED notices", async () => {
    const handle = await lease(b, "remote");
    const stream = open(a);
    stream.send({ queue: "remote", leases: [{ receiptHandle: handle, visibilityTimeout: durationFromMs(300) }] });
    expect((await stream.next()).leases).toEqual([expect.objectContaining({ receiptHandle: handle, held: true })]);
    expect((await stream.next()).leases).toEqual([
      expect.objectContaining({ receiptHandle: handle, held: false, reason: "LEASE_EXPIRED" }),
    ]);
  });

  it("releases the owner's leases, and its own, at once when the client cancels, if it asked to", async () => {
    const remote = await lease(b, "remote");
    const local = await lease(a, "local");
    const stream = open(a);
    stream.send({
      queue: "remote",
      releaseOnDisconnect: true,
      leases: [{ receiptHandle: remote, visibilityTimeout: durationFromMs(60_000) }],
    });
    stream.send({ queue: "local", leases: [{ receiptHandle: local, visibilityTimeout: durationFromMs(60_000) }] });
    await stream.next();
    await stream.next();
    const started = performance.now();
    // Polls already waiting when the stream breaks: the releases wake them.
    const polls = [b, a].map((broker, index) =>
      broker.rpc.receive({ queue: ["remote", "local"][index]!, waitTime: durationFromMs(5000) }),
    );
    await vi.waitFor(() =>
      expect([b.server.broker.waitingReceiveCount, a.server.broker.waitingReceiveCount]).toEqual([1, 1]),
    );
    stream.cancel();
    for (const poll of polls) {
      const { messages } = await poll;
      expect(messages).toHaveLength(1);
      expect(messages[0]!.receiveCount).toBe(2);
    }
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("leaves the owner's leases held when the client half-closes, even with release_on_disconnect", async () => {
    const handle = await lease(b, "remote");
    const stream = open(a);
    stream.send({
      queue: "remote",
      releaseOnDisconnect: true,
      leases: [{ receiptHandle: handle, visibilityTimeout: durationFromMs(60_000) }],
    });
    await stream.next();
    expect(b.server.broker.streams.count).toBe(1);
    stream.end();
    expect(await stream.closed).toBeUndefined();
    // A's stream to B was half-closed too: B closed it, and kept the lease.
    await vi.waitFor(() => expect(b.server.broker.streams.count).toBe(0));
    expect((await b.rpc.getQueue({ name: "remote" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 1n });
  });

  it("releases nothing at the owner when the client cancels without release_on_disconnect", async () => {
    const handle = await lease(b, "remote");
    const stream = open(a);
    stream.send({ queue: "remote", leases: [{ receiptHandle: handle, visibilityTimeout: durationFromMs(60_000) }] });
    await stream.next();
    stream.cancel();
    await vi.waitFor(() => expect(b.server.broker.streams.count).toBe(0));
    expect((await b.rpc.getQueue({ name: "remote" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 1n });
  });

  it("ends the client's stream with the owner's UNAVAILABLE when the owner shuts down", async () => {
    const handle = await lease(b, "remote");
    const stream = open(a);
    stream.send({ queue: "remote", leases: [{ receiptHandle: handle }] });
    await stream.next();
    await b.stop();
    expect(await stream.closed).toMatchObject({ code: status.UNAVAILABLE, reason: "SHUTTING_DOWN" });
  });

  it("ends the client's stream with QUEUE_MOVING when the owner cannot be reached", async () => {
    a.router.send(await deadPeer("broker-gone"), "stranded");
    const handle = await lease(a, "local");
    const stream = open(a);
    stream.send({ queue: "local", leases: [{ receiptHandle: handle }] });
    expect((await stream.next()).leases[0]).toMatchObject({ held: true });
    stream.send({ queue: "stranded", leases: [{ receiptHandle: "AAAA" }] });
    const error = await stream.closed;
    expect(error).toMatchObject({ code: status.UNAVAILABLE, reason: "QUEUE_MOVING" });
    expect(error!.message).toContain("broker-gone");
  });

  it("fails a stream passed on by another broker at a request on a queue this one does not serve", async () => {
    const handle = await lease(a, "local");
    const stream = open(a, { interceptors: [posingAsBroker("c")] });
    // Its own queues it renews.
    stream.send({ queue: "local", leases: [{ receiptHandle: handle }] });
    expect((await stream.next()).leases[0]).toMatchObject({ held: true });
    stream.send({ queue: "remote", leases: [] });
    expect(await stream.closed).toMatchObject({ code: status.UNAVAILABLE, reason: "QUEUE_MOVING" });
    expect(b.server.broker.streams.count).toBe(0);
  });

  it("runs a Consumer through a broker that does not own its queue, its leases renewed past their timeout", async () => {
    const client = new QueueClient(a.peer.address);
    let stop = (): Promise<void> => Promise.resolve();
    try {
      await client.send("remote", "job");
      const handled = new Promise<{ body: string; receiveCount: number; aborted: boolean }>((resolve) => {
        const consumer = client.consume(
          "remote",
          async (message, context) => {
            // Twice the lease: only renewals, through A to B, keep it.
            await new Promise((wait) => setTimeout(wait, 1200));
            resolve({
              body: Buffer.from(message.body).toString(),
              receiveCount: message.receiveCount,
              aborted: context.signal.aborted,
            });
          },
          { visibilityTimeoutMs: 600, waitTimeMs: 1000, onError: () => undefined },
        );
        stop = () => consumer.stop();
      });
      expect(await handled).toEqual({ body: "job", receiveCount: 1, aborted: false });
      // Resolving deleted it, at B.
      await vi.waitFor(async () =>
        expect((await b.rpc.getQueue({ name: "remote" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n }),
      );
    } finally {
      await stop();
      client.close();
    }
  });
});

describeForwarding("Heartbeat answers and notices from an owner", () => {
  // A stand-in owner that sends an expiry notice ahead of each answer, and
  // the answer a while later: what a real owner does when a lease runs out
  // while a request is on its way.
  let owner: Server;
  let a: TestBroker;
  const streams: HeartbeatStream[] = [];
  beforeEach(async () => {
    owner = new Server();
    owner.addService(
      { heartbeat: queueServiceDefinition["heartbeat"]! },
      {
        heartbeat: (call: ServerDuplexStream<HeartbeatRequest, HeartbeatResponse>) => {
          call.on("data", (request: HeartbeatRequest) => {
            call.write(
              create(HeartbeatResponseSchema, {
                leases: [{ receiptHandle: "expired-elsewhere", held: false, reason: "LEASE_EXPIRED" }],
              }),
            );
            const answer = create(HeartbeatResponseSchema, {
              leases: request.leases.map(({ receiptHandle }) => ({ receiptHandle, held: true })),
            });
            setTimeout(() => call.write(answer), 100);
          });
          call.on("end", () => call.end());
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      owner.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    a = await startBroker("a");
    a.router.send({ nodeId: "fake", address: `127.0.0.1:${port}` }, "remote");
    await a.rpc.createQueue({ name: "local" });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    owner.forceShutdown();
    await a.stop();
  });

  it("tells an owner's answer from its notices by the handles, and keeps the answers in order", async () => {
    const stream = openHeartbeatStream(a.peer.address);
    streams.push(stream);
    stream.send({ queue: "remote", leases: [{ receiptHandle: "mine" }] });
    stream.send({ queue: "local", leases: [] });
    const responses = [await stream.next(), await stream.next(), await stream.next()].map(({ leases }) =>
      leases.map(({ receiptHandle, held, reason }) => ({ receiptHandle, held, reason })),
    );
    expect(responses).toEqual([
      [{ receiptHandle: "expired-elsewhere", held: false, reason: "LEASE_EXPIRED" }],
      [{ receiptHandle: "mine", held: true, reason: "" }],
      [],
    ]);
  });
});
