// Subscribe streams under bearer tokens: the stream is authenticated when it
// opens, its first request needs receive on its queue (refused alike whether
// the queue exists or not), and each later request is checked against the
// auth file current at that request, so a reload that revokes a token or
// narrows it ends the streams it opened.
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { openSubscribeStream, probeSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
const worker = makeToken("orders-worker", { queues: "orders-*", allow: ["send", "receive"] });
const sender = makeToken("orders-sender", { queues: "orders-*", allow: ["send"] });

describe("Subscribe under bearer tokens", () => {
  let h: AuthHarness;
  const streams: SubscribeStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  async function start(): Promise<void> {
    h = await startAuthHarness([root, worker, sender]);
    const admin = h.client(root.token);
    for (const name of ["orders-1", "orders-2", "payments"]) {
      await admin.createQueue({ name });
      await admin.send({ queue: name, body: Buffer.from(`${name} job`) });
    }
  }

  function subscribe(queue: string, token?: string): SubscribeStream {
    const stream = openSubscribeStream(h.server.address, token, { deadlineMs: 15_000 });
    streams.push(stream);
    stream.send({ queue });
    return stream;
  }

  async function visible(queue: string): Promise<bigint> {
    return (await h.client(root.token).getQueue({ name: queue })).queue!.stats!.visible;
  }

  it("delivers to a token that may receive from the queue", async () => {
    await start();
    const stream = subscribe("orders-1", worker.token);
    const [message] = await stream.deliveries(1);
    expect(Buffer.from(message!.body).toString()).toBe("orders-1 job");
    stream.send({ ackReceiptHandles: [message!.receiptHandle] });
    let { acks } = await stream.next();
    while (acks.length === 0) ({ acks } = await stream.next());
    expect(acks.map((ack) => ack.reason)).toEqual([""]);
  });

  it("refuses a stream without a token, or with a wrong one, and delivers nothing", async () => {
    await start();
    const anonymous = await subscribe("orders-1").closed;
    expect({ code: anonymous?.code, reason: anonymous?.reason }).toEqual({
      code: status.UNAUTHENTICATED,
      reason: "TOKEN_MISSING",
    });
    const wrong = await subscribe("orders-1", makeToken("nobody", { queues: "*", allow: ["receive"] }).token).closed;
    expect({ code: wrong?.code, reason: wrong?.reason }).toEqual({
      code: status.UNAUTHENTICATED,
      reason: "TOKEN_INVALID",
    });
    expect(await visible("orders-1")).toBe(1n);
  });

  it("refuses PERMISSION_DENIED on a queue the token may not receive from, alike whether it exists or not", async () => {
    await start();
    const messages: string[] = [];
    for (const queue of ["payments", "paymentz"]) {
      const error = await subscribe(queue, worker.token).closed;
      expect({ code: error?.code, reason: error?.reason }).toEqual({
        code: status.PERMISSION_DENIED,
        reason: "PERMISSION_DENIED",
      });
      messages.push(error!.message.replaceAll(queue, "<queue>"));
    }
    // Nothing in the refusal tells the queue that exists from the one that does not.
    expect(messages[0]).toBe(messages[1]);
    expect(messages[0]).toBe(`token "orders-worker" has no receive permission on queue "<queue>" (queue)`);
    // A send-only token may not consume its own queues either.
    expect((await subscribe("orders-1", sender.token).closed)?.reason).toBe("PERMISSION_DENIED");
    expect(await visible("payments")).toBe(1n);
    expect(await visible("orders-1")).toBe(1n);
  });

  it("ends an open stream at its next request once a reload revokes its token, or withdraws its permission", async () => {
    await start();
    const narrowed = makeToken("orders-worker", { queues: "orders-2", allow: ["receive"] });
    narrowed.entry.sha256 = worker.entry.sha256;

    const first = subscribe("orders-1", worker.token);
    const [held] = await first.deliveries(1);
    await h.writeTokens([root, narrowed]);
    expect(await h.server.reloadAuth()).toBe(true);
    first.send({ ackReceiptHandles: [held!.receiptHandle] });
    const denied = await first.closed;
    expect({ code: denied?.code, reason: denied?.reason }).toEqual({
      code: status.PERMISSION_DENIED,
      reason: "PERMISSION_DENIED",
    });
    // The refused ack deleted nothing: the message is still leased, not gone.
    const stats = (await h.client(root.token).getQueue({ name: "orders-1" })).queue!.stats!;
    expect(stats.visible + stats.inFlight).toBe(1n);

    const second = subscribe("orders-2", worker.token);
    await second.deliveries(1);
    await probeSubscribeStream(second);
    await h.writeTokens([root]);
    expect(await h.server.reloadAuth()).toBe(true);
    second.send({ flowControl: { maxOutstandingMessages: 5 } });
    const revoked = await second.closed;
    expect({ code: revoked?.code, reason: revoked?.reason }).toEqual({
      code: status.UNAUTHENTICATED,
      reason: "TOKEN_INVALID",
    });
    // A new stream with the revoked token is refused when it opens.
    expect((await subscribe("orders-2", worker.token).closed)?.reason).toBe("TOKEN_INVALID");
  });
});
