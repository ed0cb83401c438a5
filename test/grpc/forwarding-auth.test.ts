// Forwarding under bearer tokens. The broker a call reaches checks the token
// first, before it looks up where the queue lives, so a refused caller learns
// nothing of the cluster; the owner gets the caller's token and checks it
// again by its own auth file, and its refusal comes back unchanged.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { bearerTokenInterceptor } from "../../src/client/bearer-token.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { openHeartbeatStream, type HeartbeatStream } from "../support/heartbeat-stream.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { makeTempDir } from "../support/temp-dir.js";
import { authFileText, makeToken, type TestToken } from "../security/auth-harness.js";
import {
  deadPeer,
  describeForwarding,
  hintingRpc,
  outcome,
  startBroker,
  type HintingRpc,
  type TestBroker,
} from "./forwarding-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
// A may let it receive from orders-*; B, which owns orders-b, lets it only send.
const workerAtA = makeToken("worker", { queues: "orders-*", allow: ["send", "receive"] });
const workerAtB = {
  ...workerAtA,
  entry: { ...workerAtA.entry, permissions: [{ queues: "orders-*", allow: ["send" as const] }] },
};
// Known to A only.
const stranger = makeToken("stranger", { queues: "*", allow: ["admin", "send", "receive"] });

describeForwarding("forwarding under bearer tokens", () => {
  let a: TestBroker;
  let b: TestBroker;
  let remove: () => Promise<void>;
  const clients: HintingRpc[] = [];
  const streams: (HeartbeatStream | SubscribeStream)[] = [];
  const client = (broker: TestBroker, token?: TestToken): HintingRpc => {
    const made = hintingRpc(broker.peer.address, token === undefined ? {} : { token: token.token });
    clients.push(made);
    return made;
  };

  beforeEach(async () => {
    const dir = await makeTempDir();
    remove = dir.remove;
    const authFile = async (name: string, tokens: TestToken[]): Promise<string> => {
      const path = join(dir.path, name);
      await writeFile(path, authFileText(tokens));
      return path;
    };
    [a, b] = await Promise.all([
      startBroker("a", { authFile: await authFile("a.json", [root, workerAtA, stranger]) }),
      startBroker("b", { authFile: await authFile("b.json", [root, workerAtB]) }),
    ]);
    a.router.send(b.peer, "orders-b", "payments-b");
    a.router.others = [b.peer];
    for (const name of ["orders-a", "payments-a"]) await client(a, root).rpc.createQueue({ name });
    for (const name of ["orders-b", "payments-b"]) await client(b, root).rpc.createQueue({ name });
  });
  afterEach(async () => {
    for (const made of clients.splice(0)) made.rpc.close();
    for (const stream of streams.splice(0)) stream.close();
    await Promise.all([a.stop(), b.stop()]);
    await remove();
  });

  it("passes the caller's token on: the owner serves what its own auth file allows", async () => {
    const worker = client(a, workerAtA);
    await worker.rpc.send({ queue: "orders-b", body: Buffer.from("x") });
    expect(worker.lastHint()).toBe(b.peer.address);
    expect((await client(b, root).rpc.getQueue({ name: "orders-b" })).queue!.stats!.visible).toBe(1n);
  });

  it("passes the owner's refusal back unchanged", async () => {
    // A would let the worker receive; B does not.
    const viaA = await outcome(client(a, workerAtA).rpc.receive({ queue: "orders-b" }));
    expect(viaA).toMatchObject({ code: status.PERMISSION_DENIED, reason: "PERMISSION_DENIED" });
    expect(viaA).toEqual(await outcome(client(b, workerAtB).rpc.receive({ queue: "orders-b" })));
    // A token B does not know.
    const unknown = await outcome(client(a, stranger).rpc.getQueue({ name: "orders-b" }));
    expect(unknown).toMatchObject({ code: status.UNAUTHENTICATED, reason: "TOKEN_INVALID" });
    expect(unknown).toEqual(await outcome(client(b, stranger).rpc.getQueue({ name: "orders-b" })));
  });

  it("refuses at the entry broker before looking up where the queue lives", async () => {
    // Were the call passed on, the dead owner would make it QUEUE_MOVING.
    a.router.send(await deadPeer("broker-gone"), "payments-gone");
    const worker = client(a, workerAtA);
    const error = await expectRpcError(
      worker.rpc.send({ queue: "payments-gone", body: Buffer.from("x") }),
      status.PERMISSION_DENIED,
      "PERMISSION_DENIED",
    );
    expect(error.message).not.toContain("broker-gone");
    expect(worker.lastHint()).toBeUndefined();
    const anonymous = client(a);
    await expectRpcError(anonymous.rpc.getQueue({ name: "payments-gone" }), status.UNAUTHENTICATED, "TOKEN_MISSING");
    expect(anonymous.lastHint()).toBeUndefined();
  });

  it("lists across brokers only the queues each broker lets the token see", async () => {
    const listed = await client(a, workerAtA).rpc.listQueues({});
    expect(listed.queues.map((queue) => queue.name)).toEqual(["orders-a", "orders-b"]);
    const all = await client(a, root).rpc.listQueues({});
    expect(all.queues.map((queue) => queue.name)).toEqual(["orders-a", "orders-b", "payments-a", "payments-b"]);
  });

  it("renews over the owner's stream with the caller's token, and ends with the owner's refusal", async () => {
    const admin = client(b, root).rpc;
    await admin.send({ queue: "payments-b", body: Buffer.from("x") });
    const [message] = (await admin.receive({ queue: "payments-b", visibilityTimeout: durationFromMs(30_000) }))
      .messages;
    const rooted = openHeartbeatStream(a.peer.address, { interceptors: [bearerTokenInterceptor(root.token)] });
    streams.push(rooted);
    rooted.send({ queue: "payments-b", leases: [{ receiptHandle: message!.receiptHandle }] });
    expect((await rooted.next()).leases[0]).toMatchObject({ receiptHandle: message!.receiptHandle, held: true });

    // A lets the worker renew on orders-b; B, whose queue it is, does not.
    const worker = openHeartbeatStream(a.peer.address, { interceptors: [bearerTokenInterceptor(workerAtA.token)] });
    streams.push(worker);
    worker.send({ queue: "orders-b", leases: [] });
    expect(await worker.closed).toMatchObject({ code: status.PERMISSION_DENIED, reason: "PERMISSION_DENIED" });
  });

  it("subscribes over the owner's stream with the caller's token, and ends with the owner's refusal", async () => {
    await client(b, root).rpc.send({ queue: "payments-b", body: Buffer.from("x") });
    const subscribe = (queue: string, token?: TestToken): SubscribeStream => {
      const stream = openSubscribeStream(a.peer.address, token?.token, { deadlineMs: 15_000 });
      streams.push(stream);
      stream.send({ queue });
      return stream;
    };
    const rooted = subscribe("payments-b", root);
    const [message] = await rooted.deliveries(1);
    rooted.send({ ackReceiptHandles: [message!.receiptHandle] });
    let { acks } = await rooted.next();
    while (acks.length === 0) ({ acks } = await rooted.next());
    expect(acks.map((ack) => ack.reason)).toEqual([""]);

    // A lets the worker receive from orders-b; B, whose queue it is, does not.
    expect(await subscribe("orders-b", workerAtA).closed).toMatchObject({
      code: status.PERMISSION_DENIED,
      reason: "PERMISSION_DENIED",
    });
    // A token B does not know.
    expect(await subscribe("payments-b", stranger).closed).toMatchObject({
      code: status.UNAUTHENTICATED,
      reason: "TOKEN_INVALID",
    });
  });

  it("refuses a Subscribe stream at the entry broker before looking up where its queue lives", async () => {
    // Were the stream passed on, the dead owner would make it QUEUE_MOVING.
    a.router.send(await deadPeer("broker-gone"), "payments-gone");
    const subscribe = (token?: TestToken): SubscribeStream => {
      const stream = openSubscribeStream(a.peer.address, token?.token, { deadlineMs: 15_000 });
      streams.push(stream);
      stream.send({ queue: "payments-gone" });
      return stream;
    };
    const denied = await subscribe(workerAtA).closed;
    expect(denied).toMatchObject({ code: status.PERMISSION_DENIED, reason: "PERMISSION_DENIED" });
    expect(denied!.message).not.toContain("broker-gone");
    expect(await subscribe().closed).toMatchObject({ code: status.UNAUTHENTICATED, reason: "TOKEN_MISSING" });
    // A token that may receive there is passed on, and meets the dead owner.
    expect(await subscribe(root).closed).toMatchObject({ code: status.UNAVAILABLE, reason: "QUEUE_MOVING" });
  });
});
