// Cluster mode's forwarding of unary calls: a broker whose router says
// another broker owns a queue passes the call on to that owner, and the
// caller cannot tell the difference (same answers, same errors) except for
// the owner hint naming who served it. The entry broker here is A; B owns
// the queues A's router points at it.
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import {
  InterceptingCall,
  type Metadata,
  Server,
  ServerCredentials,
  status,
  type Interceptor,
  type ServerUnaryCall,
  type sendUnaryData,
} from "@grpc/grpc-js";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { GetQueueResponseSchema, type GetQueueRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { toErrorStatus } from "../../src/grpc/error-status.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";
import { formatMoveTaskHandle } from "../../src/protocol/move-task-handle.js";
import { forwardedFromKey, peerProofKey } from "../../src/protocol/routing-metadata.js";
import { peerProof } from "../../src/security/peer-proof.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import {
  deadPeer,
  describeForwarding,
  hintingRpc,
  outcome,
  startBroker,
  testPeerKey,
  type HintingRpc,
  type TestBroker,
} from "./forwarding-harness.js";

const body = (text: string): Buffer => Buffer.from(text);

describeForwarding("forwarding unary calls to a queue's owner", () => {
  let a: TestBroker;
  let b: TestBroker;
  let viaA: HintingRpc;
  let atB: HintingRpc;
  const closers: (() => unknown)[] = [];
  beforeEach(async () => {
    [a, b] = await Promise.all([startBroker("a"), startBroker("b")]);
    viaA = hintingRpc(a.peer.address);
    atB = hintingRpc(b.peer.address);
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    viaA.rpc.close();
    atB.rpc.close();
    await Promise.all([a.stop(), b.stop()]);
  });

  it("serves every queue RPC at the owner, with the owner's answers and its hint", async () => {
    a.router.send(b.peer, "orders", "orders-dlq", "orders-retry");
    const rpc = viaA.rpc;
    const expectServedByB = (): void => expect(viaA.lastHint()).toBe(b.peer.address);

    const dlq = await rpc.createQueue({ name: "orders-dlq" });
    expectServedByB();
    expect(dlq.queue!.name).toBe("orders-dlq");
    const created = await rpc.createQueue({
      name: "orders",
      config: {
        visibilityTimeout: durationFromMs(20_000),
        redrivePolicy: { deadLetterQueue: "orders-dlq", maxReceiveCount: 3 },
      },
    });
    expectServedByB();
    await rpc.createQueue({ name: "orders-retry" });
    // The queues live at B only.
    expect(
      b.server.broker
        .allQueues()
        .map((q) => q.name)
        .sort(),
    ).toEqual(["orders", "orders-dlq", "orders-retry"]);
    expect(a.server.broker.allQueues()).toEqual([]);
    expect(created).toEqual(await b.rpc.createQueue({ name: "orders", config: created.queue!.config! }));

    expect(await rpc.getQueue({ name: "orders" })).toEqual(await b.rpc.getQueue({ name: "orders" }));
    expectServedByB();
    const updated = await rpc.updateQueue({
      name: "orders",
      config: { ...created.queue!.config!, visibilityTimeout: durationFromMs(40_000) },
    });
    expectServedByB();
    expect(updated.queue!.config!.visibilityTimeout).toEqual(durationFromMs(40_000));
    expect(await b.rpc.getQueue({ name: "orders" })).toMatchObject({
      queue: { config: { visibilityTimeout: durationFromMs(40_000) } },
    });

    const { messageId: first } = await rpc.send({ queue: "orders", body: body("1") });
    expectServedByB();
    const { messageIds: more } = await rpc.sendBatch({
      queue: "orders",
      entries: [{ body: body("2") }, { body: body("3") }, { body: body("4") }],
    });
    expectServedByB();
    expect((await b.rpc.getQueue({ name: "orders" })).queue!.stats!.visible).toBe(4n);

    const peeked = await rpc.peekMessages({ queue: "orders", pageSize: 3 });
    expectServedByB();
    expect(peeked.messages.map((m) => m.messageId)).toEqual([first, ...more].slice(0, 3));
    expect(await rpc.peekMessages({ queue: "orders", pageToken: peeked.nextPageToken })).toEqual(
      await b.rpc.peekMessages({ queue: "orders", pageToken: peeked.nextPageToken }),
    );
    expectServedByB();

    const { messages } = await rpc.receive({ queue: "orders", maxMessages: 4 });
    expectServedByB();
    expect(messages.map((m) => m.messageId).sort()).toEqual([first, ...more].sort());
    expect(messages.map((m) => Buffer.from(m.body).toString()).sort()).toEqual(["1", "2", "3", "4"]);
    const [m1, m2, m3] = messages.map((m) => m.receiptHandle);

    const changed = await rpc.changeVisibility({
      queue: "orders",
      receiptHandle: m1!,
      visibilityTimeout: durationFromMs(60_000),
    });
    expectServedByB();
    expect(changed.leaseDeadline).toBeDefined();
    const changedBatch = await rpc.changeVisibilityBatch({
      queue: "orders",
      receiptHandles: [m2!, m3!],
      visibilityTimeout: durationFromMs(60_000),
    });
    expectServedByB();
    expect(changedBatch.results.map((r) => r.code)).toEqual([0, 0]);
    await rpc.delete({ queue: "orders", receiptHandle: m1! });
    expectServedByB();
    const deleted = await rpc.deleteBatch({ queue: "orders", receiptHandles: [m2!, m3!] });
    expectServedByB();
    expect(deleted.results.map((r) => r.code)).toEqual([0, 0]);
    expect((await b.rpc.getQueue({ name: "orders" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 1n });

    const purged = await rpc.purgeQueue({ name: "orders" });
    expectServedByB();
    // The fourth message, still in flight.
    expect(purged.purgedCount).toBe(1n);

    await b.rpc.send({ queue: "orders-dlq", body: body("dead") });
    const redriven = await rpc.redriveMessages({ deadLetterQueue: "orders-dlq", destinationQueue: "orders-retry" });
    expectServedByB();
    expect(redriven.movedCount).toBe(1n);
    expect((await b.rpc.getQueue({ name: "orders-retry" })).queue!.stats!.visible).toBe(1n);

    // Move tasks: start and list name the source queue; cancel has only the handle, which names it.
    await b.rpc.send({ queue: "orders-dlq", body: body("dead again") });
    const { taskHandle } = await rpc.startMessageMoveTask({
      sourceQueue: "orders-dlq",
      destinationQueue: "orders-retry",
      maxPerSecond: 1,
    });
    expectServedByB();
    const listed = await rpc.listMessageMoveTasks({ sourceQueue: "orders-dlq" });
    expectServedByB();
    expect(listed.tasks.map((task) => task.taskHandle)).toEqual([taskHandle]);
    await rpc.cancelMessageMoveTask({ taskHandle });
    expectServedByB();

    await rpc.deleteQueue({ name: "orders" });
    expectServedByB();
    expect(
      b.server.broker
        .allQueues()
        .map((q) => q.name)
        .sort(),
    ).toEqual(["orders-dlq", "orders-retry"]);
  });

  it("passes back the owner's errors unchanged: code, reason, message, field violations, and the owner hint", async () => {
    const names = ["there", "missing", "new-one"];
    a.router.send(b.peer, ...names);
    await b.rpc.createQueue({ name: "there" });
    const negative = { seconds: -1n, nanos: 0 };
    const failing: [string, (rpc: HintingRpc["rpc"]) => Promise<unknown>, string][] = [
      ["get, missing", (rpc) => rpc.getQueue({ name: "missing" }), "QUEUE_NOT_FOUND"],
      [
        "create, bad retention",
        (rpc) => rpc.createQueue({ name: "new-one", config: { retention: durationFromMs(1000) } }),
        "INVALID_ARGUMENT",
      ],
      [
        "create, missing dead-letter queue",
        (rpc) =>
          rpc.createQueue({
            name: "new-one",
            config: { redrivePolicy: { deadLetterQueue: "missing", maxReceiveCount: 2 } },
          }),
        "DEAD_LETTER_QUEUE_NOT_FOUND",
      ],
      [
        "create, existing with another config",
        (rpc) => rpc.createQueue({ name: "there", config: { maxInFlight: 7 } }),
        "QUEUE_ALREADY_EXISTS",
      ],
      ["update, missing", (rpc) => rpc.updateQueue({ name: "missing" }), "QUEUE_NOT_FOUND"],
      ["delete queue, missing", (rpc) => rpc.deleteQueue({ name: "missing" }), "QUEUE_NOT_FOUND"],
      ["purge, missing", (rpc) => rpc.purgeQueue({ name: "missing" }), "QUEUE_NOT_FOUND"],
      [
        "send, negative delay",
        (rpc) => rpc.send({ queue: "there", body: body("x"), delay: negative }),
        "INVALID_ARGUMENT",
      ],
      [
        "send batch, bad entry",
        (rpc) =>
          rpc.sendBatch({ queue: "there", entries: [{ body: body("x") }, { body: body("y"), delay: negative }] }),
        "INVALID_ARGUMENT",
      ],
      ["receive, too many", (rpc) => rpc.receive({ queue: "there", maxMessages: 1000 }), "INVALID_ARGUMENT"],
      [
        "delete, forged handle",
        (rpc) => rpc.delete({ queue: "there", receiptHandle: "AAAAAAAAAAAA" }),
        "RECEIPT_HANDLE_INVALID",
      ],
      ["delete batch, empty", (rpc) => rpc.deleteBatch({ queue: "there", receiptHandles: [] }), "INVALID_ARGUMENT"],
      [
        "change visibility, forged handle",
        (rpc) =>
          rpc.changeVisibility({
            queue: "there",
            receiptHandle: "AAAAAAAAAAAA",
            visibilityTimeout: durationFromMs(1000),
          }),
        "RECEIPT_HANDLE_INVALID",
      ],
      [
        "change visibility batch, negative",
        (rpc) => rpc.changeVisibilityBatch({ queue: "there", receiptHandles: ["AAAA"], visibilityTimeout: negative }),
        "INVALID_ARGUMENT",
      ],
      ["redrive, missing", (rpc) => rpc.redriveMessages({ deadLetterQueue: "missing" }), "QUEUE_NOT_FOUND"],
      ["list move tasks, missing", (rpc) => rpc.listMessageMoveTasks({ sourceQueue: "missing" }), "QUEUE_NOT_FOUND"],
      [
        "cancel move task, unknown",
        (rpc) => rpc.cancelMessageMoveTask({ taskHandle: formatMoveTaskHandle("there", "unknown") }),
        "MOVE_TASK_NOT_FOUND",
      ],
    ];
    for (const [what, call, reason] of failing) {
      const forwarded = await outcome(call(viaA.rpc));
      expect(forwarded, what).toMatchObject({ reason });
      expect(forwarded, what).toEqual(await outcome(call(atB.rpc)));
      expect(viaA.lastHint(), what).toBe(b.peer.address);
      expect(atB.lastHint(), what).toBe(b.peer.address);
    }
    // Field violations come through: the BadRequest names the field.
    expect(await outcome(viaA.rpc.send({ queue: "there", body: body("x"), delay: negative }))).toMatchObject({
      violations: [{ field: "delay" }],
    });
  });

  it("serves calls on its own queues itself, with its own hint", async () => {
    a.router.send(b.peer, "elsewhere");
    await viaA.rpc.createQueue({ name: "here" });
    expect(viaA.lastHint()).toBe(a.peer.address);
    expect(a.server.broker.allQueues().map((q) => q.name)).toEqual(["here"]);
    await expectRpcError(viaA.rpc.getQueue({ name: "not-here" }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    expect(viaA.lastHint()).toBe(a.peer.address);
    // ListQueues names no queue, so no hint.
    await viaA.rpc.listQueues({});
    expect(viaA.lastHint()).toBeUndefined();
  });

  it("keeps a forwarded long poll waiting at the owner, answered when a message arrives there", async () => {
    a.router.send(b.peer, "poll");
    await b.rpc.createQueue({ name: "poll" });
    const started = performance.now();
    const poll = viaA.rpc.receive({ queue: "poll", waitTime: durationFromMs(5000) });
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(1));
    expect(a.server.broker.waitingReceiveCount).toBe(0);
    const { messageId } = await b.rpc.send({ queue: "poll", body: body("late") });
    const { messages } = await poll;
    expect(messages.map((m) => m.messageId)).toEqual([messageId]);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(viaA.lastHint()).toBe(b.peer.address);
  });

  it("cancels the owner's call when the caller cancels", async () => {
    a.router.send(b.peer, "poll");
    await b.rpc.createQueue({ name: "poll" });
    const abort = new AbortController();
    const poll = viaA.rpc.receive({ queue: "poll", waitTime: durationFromMs(10_000) }, { signal: abort.signal });
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(1));
    abort.abort();
    await expectRpcError(poll, status.CANCELLED, "");
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(0), { timeout: 2000 });
    // The owner took nothing for the poll that went away: a message sent now waits for the next receive.
    await b.rpc.send({ queue: "poll", body: body("x") });
    expect((await b.rpc.getQueue({ name: "poll" })).queue!.stats!.visible).toBe(1n);
  });

  it("ends the owner's call when the caller's deadline passes", async () => {
    a.router.send(b.peer, "poll");
    await b.rpc.createQueue({ name: "poll" });
    const poll = viaA.rpc.receive({ queue: "poll", waitTime: durationFromMs(10_000) }, { deadline: Date.now() + 1500 });
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(1));
    await expectRpcError(poll, status.DEADLINE_EXCEEDED, "");
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(0), { timeout: 2000 });
  });

  it("ends a forwarded long poll SHUTTING_DOWN when the entry broker stops, without waiting out the poll", async () => {
    a.router.send(b.peer, "poll");
    await b.rpc.createQueue({ name: "poll" });
    const poll = viaA.rpc.receive({ queue: "poll", waitTime: durationFromMs(20_000) });
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(1));
    const started = performance.now();
    await Promise.all([a.stop(), expectRpcError(poll, status.UNAVAILABLE, "SHUTTING_DOWN")]);
    expect(performance.now() - started).toBeLessThan(1000);
    await vi.waitFor(() => expect(b.server.broker.waitingReceiveCount).toBe(0), { timeout: 2000 });
  });

  it("fails QUEUE_MOVING, naming the owner, when the owner cannot be reached", async () => {
    const gone = await deadPeer("broker-gone");
    a.router.send(gone, "stranded");
    const error = await expectRpcError(
      viaA.rpc.send({ queue: "stranded", body: body("x") }),
      status.UNAVAILABLE,
      "QUEUE_MOVING",
    );
    expect(error.message).toContain("broker-gone");
    expect(viaA.lastHint()).toBeUndefined();
    // A later call tries again (and fails the same way), rather than hanging on the dead channel.
    await expectRpcError(viaA.rpc.getQueue({ name: "stranded" }), status.UNAVAILABLE, "QUEUE_MOVING");
  });

  it("fails with the route's error while nobody serves the queue", async () => {
    a.router.unavailable(
      "moving",
      new HoldshelfError("QUEUE_MOVING", 'queue "moving" is moving between brokers; retry'),
    );
    const error = await expectRpcError(viaA.rpc.getQueue({ name: "moving" }), status.UNAVAILABLE, "QUEUE_MOVING");
    expect(error.message).toBe('queue "moving" is moving between brokers; retry');
    expect(viaA.lastHint()).toBeUndefined();
  });

  it("never passes a call on twice: a broker that got a call for a queue it does not serve answers QUEUE_MOVING", async () => {
    // Two stale views: each thinks the other owns the queue.
    a.router.send(b.peer, "ping-pong");
    b.router.send(a.peer, "ping-pong");
    const started = performance.now();
    await expectRpcError(
      viaA.rpc.getQueue({ name: "ping-pong" }, { deadline: Date.now() + 5000 }),
      status.UNAVAILABLE,
      "QUEUE_MOVING",
    );
    expect(performance.now() - started).toBeLessThan(2000);

    // A call that says it was passed on is not passed on again, though the queue exists where A routes it.
    a.router.send(b.peer, "at-b");
    await b.rpc.createQueue({ name: "at-b" });
    expect((await viaA.rpc.getQueue({ name: "at-b" })).queue!.name).toBe("at-b");
    const posing = hintingRpc(a.peer.address, { forwardedFrom: "c" });
    closers.push(() => posing.rpc.close());
    await expectRpcError(posing.rpc.getQueue({ name: "at-b" }), status.UNAVAILABLE, "QUEUE_MOVING");
    // Its own queues it serves as ever.
    await posing.rpc.createQueue({ name: "at-a" });
    expect(posing.lastHint()).toBe(a.peer.address);
  });

  it("takes a client that sets holdshelf-forwarded-from without the brokers' proof for the client it is", async () => {
    a.router.send(b.peer, "at-b");
    await b.rpc.createQueue({ name: "at-b" });
    for (const proof of [null, "forged", peerProof(Buffer.alloc(32, 1))]) {
      const posing = hintingRpc(a.peer.address, { forwardedFrom: "c", proof });
      closers.push(() => posing.rpc.close());
      expect((await posing.rpc.getQueue({ name: "at-b" })).queue!.name).toBe("at-b");
      expect(posing.lastHint()).toBe(b.peer.address);
    }
  });
});

describeForwarding("what a forwarded call carries", () => {
  // A stand-in owner that records what reaches it, and answers as told.
  let owner: Server;
  let ownerAddress: string;
  const seen: { metadata: Metadata; deadline: number }[] = [];
  let answer: (callback: sendUnaryData<unknown>) => void;
  let a: TestBroker;
  beforeEach(async () => {
    owner = new Server();
    owner.addService(
      { getQueue: queueServiceDefinition["getQueue"]! },
      {
        getQueue: (call: ServerUnaryCall<GetQueueRequest, unknown>, callback: sendUnaryData<unknown>) => {
          const deadline = call.getDeadline();
          seen.push({ metadata: call.metadata, deadline: deadline instanceof Date ? deadline.getTime() : deadline });
          answer(callback);
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      owner.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    ownerAddress = `127.0.0.1:${port}`;
    a = await startBroker("a");
    a.router.send({ nodeId: "fake", address: ownerAddress }, "q");
  });
  afterEach(async () => {
    seen.length = 0;
    owner.forceShutdown();
    await a.stop();
  });

  /** A client of A that sends `x-request-id` on every call. */
  function client() {
    const tag: Interceptor = (options, next) =>
      new InterceptingCall(next(options), {
        start(metadata, listener, go) {
          metadata.set("x-request-id", "42");
          metadata.set("authorization", "Bearer not-checked-here");
          go(metadata, listener);
        },
      });
    return createQueueServiceRpc(a.peer.address, { channelOptions: { interceptors: [tag] } });
  }

  it("passes the caller's metadata and deadline, and the entry broker's node id", async () => {
    answer = (callback) => callback(null, create(GetQueueResponseSchema, { queue: { name: "q" } }));
    const rpc = client();
    const deadline = Date.now() + 8000;
    try {
      expect((await rpc.getQueue({ name: "q" }, { deadline })).queue!.name).toBe("q");
    } finally {
      rpc.close();
    }
    const [{ metadata, deadline: ownerDeadline }] = seen as [(typeof seen)[number]];
    expect(metadata.get("x-request-id")).toEqual(["42"]);
    expect(metadata.get("authorization")).toEqual(["Bearer not-checked-here"]);
    expect(metadata.get(forwardedFromKey)).toEqual(["a"]);
    expect(metadata.get(peerProofKey)).toEqual([peerProof(testPeerKey)]);
    // grpc-js sets its own user agent; the caller's is not sent again beside it.
    expect(metadata.get("user-agent")).toHaveLength(1);
    expect(Math.abs(ownerDeadline - deadline)).toBeLessThan(1000);
  });

  it("passes an owner's error back with its code, message, details and other trailers", async () => {
    answer = (callback) => {
      const refused = toErrorStatus(new HoldshelfError("LEASE_SUPERSEDED", "received again since"), () => undefined);
      refused.metadata.set("x-owner-note", "kept");
      callback(refused);
    };
    const rpc = hintingRpc(a.peer.address);
    try {
      const error = await expectRpcError(
        rpc.rpc.getQueue({ name: "q" }),
        status.FAILED_PRECONDITION,
        "LEASE_SUPERSEDED",
      );
      expect(error.message).toBe("received again since");
      const trailers = (error.cause as { metadata: Metadata }).metadata;
      expect(trailers.get("x-owner-note")).toEqual(["kept"]);
      expect(rpc.lastHint()).toBe(ownerAddress);
    } finally {
      rpc.rpc.close();
    }
  });

  it("passes an owner's gRPC-layer status (no holdshelf details) back as it is", async () => {
    answer = (callback) => callback({ code: status.RESOURCE_EXHAUSTED, details: "Received message larger than max" });
    const rpc = hintingRpc(a.peer.address);
    try {
      const error = await expectRpcError(rpc.rpc.getQueue({ name: "q" }), status.RESOURCE_EXHAUSTED, "");
      expect(error.message).toBe("Received message larger than max");
    } finally {
      rpc.rpc.close();
    }
  });
});
