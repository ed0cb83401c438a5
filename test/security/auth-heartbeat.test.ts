// Heartbeat streams under bearer tokens, through the TS client's token
// option: the stream is authenticated when it opens, and each request needs
// receive on its queue by the auth file current at that request, so a reload
// that revokes a token or narrows it stops the renewals of streams it opened.
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HeartbeatStream } from "../../src/client/heartbeat-stream.js";
import type { LeaseState } from "../../src/client/types.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
const worker = makeToken("orders-worker", { queues: "orders-*", allow: ["send", "receive"] });
const sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });

/** A stream's responses one at a time; a stream that failed throws its RpcError. */
function reader(stream: HeartbeatStream): () => Promise<LeaseState[]> {
  const iterator = stream[Symbol.asyncIterator]();
  return async () => {
    const next = await iterator.next();
    if (next.done) throw new Error("the stream ended");
    return next.value;
  };
}

async function failure(read: () => Promise<unknown>): Promise<RpcError> {
  const error = await read().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

describe("Heartbeat under bearer tokens", () => {
  let h: AuthHarness;
  const clients: QueueClient[] = [];
  const client = (token?: string): QueueClient => {
    const made = new QueueClient(h.server.address, token === undefined ? {} : { token });
    clients.push(made);
    return made;
  };
  afterEach(async () => {
    for (const made of clients.splice(0)) made.close();
    await h.stop();
  });

  async function start(): Promise<{ admin: QueueClient; handleOf: (queue: string) => Promise<string> }> {
    h = await startAuthHarness([root, worker, sender]);
    const admin = client(root.token);
    for (const name of ["orders-1", "orders-2", "payments"]) await admin.createQueue(name);
    const handleOf = async (queue: string) => {
      await admin.send(queue, "x");
      const [message] = await admin.receive(queue, { visibilityTimeoutMs: 60_000 });
      return message!.receiptHandle;
    };
    return { admin, handleOf };
  }

  it("renews leases for a token that may receive, with the token on the stream", async () => {
    const { handleOf } = await start();
    const handle = await handleOf("orders-1");
    const stream = client(worker.token).heartbeat();
    const next = reader(stream);
    stream.send({ queue: "orders-1", leases: [{ receiptHandle: handle, visibilityTimeoutMs: 30_000 }] });
    expect(await next()).toEqual([expect.objectContaining({ receiptHandle: handle, held: true })]);
    stream.end();
  });

  it("refuses a stream without a token, or with a wrong one, before any request", async () => {
    await start();
    const anonymous = client().heartbeat();
    expect(await failure(reader(anonymous))).toMatchObject({ code: status.UNAUTHENTICATED, reason: "TOKEN_MISSING" });
    const wrong = client(makeToken("nobody", { queues: "*", allow: ["receive"] }).token).heartbeat();
    expect(await failure(reader(wrong))).toMatchObject({ code: status.UNAUTHENTICATED, reason: "TOKEN_INVALID" });
  });

  it("ends the stream with PERMISSION_DENIED at a request on a queue the token may not receive from, hidden or missing", async () => {
    const { handleOf } = await start();
    const handle = await handleOf("payments");
    for (const queue of ["payments", "paymentz"]) {
      const stream = client(worker.token).heartbeat();
      stream.send({ queue, leases: [{ receiptHandle: handle, visibilityTimeoutMs: 30_000 }] });
      const error = await failure(reader(stream));
      expect(error).toMatchObject({ code: status.PERMISSION_DENIED, reason: "PERMISSION_DENIED" });
      expect(error.message).toBe(`token "orders-worker" has no receive permission on queue "${queue}" (queue)`);
    }
    // A send-only token may not hold leases on its own queues either.
    const stream = client(sender.token).heartbeat();
    stream.send({ queue: "orders-1", leases: [] });
    expect(await failure(reader(stream))).toMatchObject({ reason: "PERMISSION_DENIED" });
  });

  it("ends a stream that moves on to a forbidden queue, after answering the allowed one", async () => {
    const { handleOf } = await start();
    const stream = client(worker.token).heartbeat();
    const next = reader(stream);
    stream.send({
      queue: "orders-1",
      leases: [{ receiptHandle: await handleOf("orders-1"), visibilityTimeoutMs: 30_000 }],
    });
    expect((await next())[0]!.held).toBe(true);
    stream.send({
      queue: "payments",
      leases: [{ receiptHandle: await handleOf("payments"), visibilityTimeoutMs: 30_000 }],
    });
    expect(await failure(next)).toMatchObject({ reason: "PERMISSION_DENIED" });
  });

  it("does not renew a handle of another queue, real or tampered, named under a permitted queue", async () => {
    const { handleOf } = await start();
    const foreign = await handleOf("payments");
    const own = await handleOf("orders-2");
    const tampered = Buffer.from(own, "base64url");
    tampered[tampered.length - 1]! ^= 1;
    const stream = client(worker.token).heartbeat();
    stream.send({
      queue: "orders-1",
      leases: [foreign, own, tampered.toString("base64url")].map((receiptHandle) => ({
        receiptHandle,
        visibilityTimeoutMs: 30_000,
      })),
    });
    const states = await reader(stream)();
    expect(states.map((state) => [state.held, state.reason])).toEqual([
      [false, "RECEIPT_HANDLE_INVALID"],
      [false, "RECEIPT_HANDLE_INVALID"],
      [false, "RECEIPT_HANDLE_INVALID"],
    ]);
    stream.end();
  });

  it("lets a call admitted before a reload finish, and refuses the next one", async () => {
    const { admin } = await start();
    const asWorker = client(worker.token);
    // A long poll that is waiting when the worker's token is revoked.
    const polling = asWorker.receive("orders-1", { waitTimeMs: 20_000 });
    await vi.waitFor(() => expect(h.server.broker.waitingReceiveCount).toBe(1), { timeout: 10_000 });
    await h.writeTokens([root]);
    expect(await h.server.reloadAuth()).toBe(true);
    await admin.send("orders-1", "after the reload");
    const [message] = await polling;
    expect(Buffer.from(message!.body).toString()).toBe("after the reload");
    await expect(asWorker.receive("orders-1")).rejects.toMatchObject({ reason: "TOKEN_INVALID" });
  });

  it("stops renewing for a token a reload revoked, and for a permission a reload withdrew", async () => {
    const { handleOf } = await start();
    const handle = await handleOf("orders-1");
    const renewal = { queue: "orders-1", leases: [{ receiptHandle: handle, visibilityTimeoutMs: 30_000 }] };
    const narrowed = makeToken("orders-worker", { queues: "orders-2", allow: ["receive"] });
    narrowed.entry.sha256 = worker.entry.sha256;

    const first = client(worker.token).heartbeat();
    const readFirst = reader(first);
    first.send(renewal);
    expect((await readFirst())[0]!.held).toBe(true);
    await h.writeTokens([root, narrowed]);
    expect(await h.server.reloadAuth()).toBe(true);
    first.send(renewal);
    expect(await failure(readFirst)).toMatchObject({ reason: "PERMISSION_DENIED" });

    const second = client(worker.token).heartbeat();
    const readSecond = reader(second);
    second.send({ queue: "orders-2", leases: [] });
    expect(await readSecond()).toEqual([]);
    await h.writeTokens([root]);
    expect(await h.server.reloadAuth()).toBe(true);
    second.send({ queue: "orders-2", leases: [] });
    expect(await failure(readSecond)).toMatchObject({ code: status.UNAUTHENTICATED, reason: "TOKEN_INVALID" });
  });
});
