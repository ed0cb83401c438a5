import { once } from "node:events";
import { connect } from "node:http2";
import { Client, credentials, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  GetQueueRequestSchema,
  HeartbeatRequestSchema,
  type HeartbeatRequest,
  type HeartbeatResponse,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { queueServiceDefinition } from "../../src/protocol/queue-service-definition.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { openSubscribeStream, probeSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { startLimitsHarness, type LimitsClient, type LimitsHarness } from "./limits-harness.js";

type Heartbeat = ClientDuplexStream<HeartbeatRequest, HeartbeatResponse>;

/** Opens a Heartbeat stream and waits for its first answer: the broker has admitted it. */
async function openAdmitted(client: LimitsClient): Promise<Heartbeat> {
  const stream = client.heartbeat();
  stream.write(create(HeartbeatRequestSchema, { queue: "q" }));
  await once(stream, "data");
  return stream;
}

/** The error a stream ends with. */
function streamError(stream: Heartbeat): Promise<RpcError> {
  return new Promise((resolve) =>
    stream.once("error", (error: ServiceError) => resolve(RpcError.fromServiceError(error))),
  );
}

/** The bodies of a Receive's answer, as text. */
function bodiesOf(answer: unknown): string[] {
  return (answer as { messages: { body: Uint8Array }[] }).messages.map((message) =>
    Buffer.from(message.body).toString(),
  );
}

/** Half-closes a stream and waits for the broker to end it with OK. */
async function endCleanly(stream: Heartbeat): Promise<void> {
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("status", (s: { code: number }) =>
      s.code === status.OK ? resolve() : reject(new Error(`status ${s.code}`)),
    );
    stream.on("error", reject);
  });
  stream.resume();
  stream.end();
  await ended;
}

describe("concurrent calls per connection", () => {
  let h: LimitsHarness;
  beforeEach(async () => {
    h = await startLimitsHarness({ maxStreamsPerConnection: 3 });
  });
  afterEach(() => h.stop());

  it("refuses calls past the limit on a connection with TOO_MANY_STREAMS, serves other connections, and frees room as calls end", async () => {
    const [busy, other] = [h.connect(), h.connect()];
    await busy.createQueue({ name: "q" });
    const streams = [await openAdmitted(busy), await openAdmitted(busy), await openAdmitted(busy)];

    // A unary call and a fourth stream on the full connection are refused at once.
    const refused = await expectRpcError(busy.getQueue({ name: "q" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS");
    expect(refused.message).toContain("--max-streams-per-connection 3");
    // Refused calls are counted like any other in the gRPC metrics.
    const handled = await h.server.metrics.getSingleMetricAsString("grpc_server_handled_total");
    expect(handled).toMatch(
      /grpc_server_handled_total\{[^}]*grpc_method="GetQueue"[^}]*grpc_code="ResourceExhausted"\} 1\n/,
    );
    const fourth = busy.heartbeat();
    fourth.write(create(HeartbeatRequestSchema, { queue: "q" }));
    const fourthError = await streamError(fourth);
    expect({ code: fourthError.code, reason: fourthError.reason }).toEqual({
      code: status.RESOURCE_EXHAUSTED,
      reason: "TOO_MANY_STREAMS",
    });

    // Another connection is served normally meanwhile, up to its own limit.
    await other.send({ queue: "q", body: Buffer.from("x") });
    const otherStreams = [await openAdmitted(other), await openAdmitted(other)];
    expect((await other.receive({ queue: "q" })).messages).toHaveLength(1);

    // The refused calls took no room: ending one stream makes room for exactly one call.
    await endCleanly(streams.pop()!);
    streams.push(await openAdmitted(busy));
    await expectRpcError(busy.getQueue({ name: "q" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS");

    // Once the load goes, the whole limit is back.
    for (const stream of [...streams, ...otherStreams]) await endCleanly(stream);
    const again = await Promise.all([
      busy.getQueue({ name: "q" }),
      busy.getQueue({ name: "q" }),
      busy.getQueue({ name: "q" }),
    ]);
    expect(again).toHaveLength(3);
  });

  it("counts Subscribe streams as calls of their connection", async () => {
    await h.connect().createQueue({ name: "q" });
    // One connection of its own, shared by the streams and the unary call below.
    const client = new Client(h.server.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
    const getQueue = (): Promise<unknown> => {
      const method = queueServiceDefinition["getQueue"]!;
      return new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          create(GetQueueRequestSchema, { name: "q" }),
          (error: ServiceError | null, response?: unknown) =>
            error ? reject(RpcError.fromServiceError(error)) : resolve(response),
        ),
      );
    };
    const subscribe = (): SubscribeStream => {
      const stream = openSubscribeStream(h.server.address, undefined, { client, deadlineMs: 15_000 });
      stream.send({ queue: "q" });
      return stream;
    };
    try {
      const streams = [subscribe(), subscribe(), subscribe()];
      for (const stream of streams) await probeSubscribeStream(stream);
      await expectRpcError(getQueue(), status.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS");
      const fourth = await subscribe().closed;
      expect({ code: fourth?.code, reason: fourth?.reason }).toEqual({
        code: status.RESOURCE_EXHAUSTED,
        reason: "TOO_MANY_STREAMS",
      });
      // The refused stream opened no subscription.
      expect(h.server.broker.streams.subscriberCount).toBe(3);

      // A half-closed Subscribe stream gives its room back.
      streams[0]!.end();
      expect(await streams[0]!.closed).toBeUndefined();
      await getQueue();
    } finally {
      client.close();
    }
  });

  it("sets HTTP/2 MAX_CONCURRENT_STREAMS to twice the limit, as the backstop behind it", async () => {
    const session = connect(`http://${h.server.address}`);
    try {
      const [settings] = (await once(session, "remoteSettings")) as [{ maxConcurrentStreams?: number }];
      expect(settings.maxConcurrentStreams).toBe(6);
    } finally {
      session.close();
    }
  });

  it("counts long polls, and frees their room when they are cancelled or answered", async () => {
    const [busy, producer] = [h.connect(), h.connect()];
    await producer.createQueue({ name: "q" });
    const cancel = new AbortController();
    const polls = [
      busy.receive({ queue: "q", waitTime: { seconds: 20n } }),
      busy
        .receive({ queue: "q", waitTime: { seconds: 20n } }, { signal: cancel.signal })
        .catch((error: unknown) => error),
      busy.receive({ queue: "q", waitTime: { seconds: 20n } }),
    ];
    await expect.poll(() => h.server.broker.waitingReceiveCount, { timeout: 10_000 }).toBe(3);
    await expectRpcError(busy.receive({ queue: "q" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_STREAMS");

    // One answered (the oldest waiter), one cancelled: two calls of room again.
    await producer.send({ queue: "q", body: Buffer.from("x") });
    expect(bodiesOf(await polls[0])).toEqual(["x"]);
    cancel.abort();
    expect(await polls[1]).toBeInstanceOf(RpcError);
    await expect.poll(() => h.server.broker.waitingReceiveCount, { timeout: 10_000 }).toBe(1);
    // The server may see the cancellation a moment after the client: allow it that moment.
    await expect
      .poll(
        () =>
          Promise.all([busy.getQueue({ name: "q" }), busy.getQueue({ name: "q" })]).then(
            () => true,
            () => false,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe(true);
    await producer.send({ queue: "q", body: Buffer.from("y") });
    expect(bodiesOf(await polls[2])).toEqual(["y"]);
  });
});
