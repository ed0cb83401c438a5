import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Consumer, type ConsumerClient, type ConsumerOptions, type MessageHandler } from "../../src/client/consumer.js";
import { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { stopOnSignals } from "../../src/client/stop-on-signals.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { makeToken, startAuthHarness, type AuthHarness } from "../security/auth-harness.js";
import { freePort } from "../support/free-port.js";
import { startGrpcHarness } from "../support/grpc-harness.js";
import { makeTempDir } from "../support/temp-dir.js";
import { text } from "../support/text.js";
import { aborted, sleep, startConsumerHarness, type ConsumerHarness, consumerModes } from "./consumer-harness.js";

// Long enough for a consumer that retries to report again: its first retries
// come after 50-100 ms and 100-200 ms (backoff.ts).
const quietMs = 600;

/** Whether an error is an RpcError with this reason. */
const withReason = (reason: string) => expect.objectContaining({ reason });

/** Resolves with how done settled, or "pending" if it has not. */
async function doneState(consumer: Consumer): Promise<"resolved" | "rejected" | "pending"> {
  return Promise.race([
    consumer.done.then(
      () => "resolved" as const,
      () => "rejected" as const,
    ),
    sleep(0).then(() => "pending" as const),
  ]);
}

describe.each(consumerModes)("a Consumer on a queue that does not exist ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
  });
  afterEach(async () => {
    await c.stop();
  });

  it.each([
    { start: "reading the queue's lease length (GetQueue)", options: {} },
    { start: "with its own lease length, on its first stream or Receive", options: { visibilityTimeoutMs: 5_000 } },
  ])(
    "rejects stopOnSignals and done at once with QUEUE_NOT_FOUND, $start, and retries nothing",
    async ({ options }) => {
      const listeners = process.listenerCount("SIGTERM");
      const consumer = c.consume("missing", () => undefined, options);
      const failure = await stopOnSignals(consumer).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(RpcError);
      expect(failure).toMatchObject({ code: status.NOT_FOUND, reason: "QUEUE_NOT_FOUND" });
      await expect(consumer.done).rejects.toBe(failure);
      expect(c.errors).toContain(failure);
      expect(process.listenerCount("SIGTERM")).toBe(listeners);

      const reported = c.errors.length;
      await sleep(quietMs);
      expect(c.errors).toHaveLength(reported);
      // Stopping a consumer that ended by itself is fine, and changes nothing.
      await consumer.stop();
      await expect(consumer.done).rejects.toBe(failure);
    },
  );
});

describe.each(consumerModes)("a Consumer whose token may not receive from its queue ($mode)", ({ mode }) => {
  const admin = makeToken("admin", { queues: "*", allow: ["admin", "send", "receive"] });
  const worker = makeToken("worker", { queues: "jobs", allow: ["receive"] });
  // May see "jobs" (GetQueue) but not receive from it: refused on the stream, or on Receive.
  const sender = makeToken("sender", { queues: "jobs", allow: ["send"] });
  // Holds nothing on "jobs": refused as early as GetQueue.
  const stranger = makeToken("stranger", { queues: "other-*", allow: ["receive"] });
  // Not in the auth file at all.
  const unknown = makeToken("unknown", { queues: "*", allow: ["receive"] });
  let h: AuthHarness;
  const clients: QueueClient[] = [];
  const consumers: Consumer[] = [];
  beforeEach(async () => {
    h = await startAuthHarness([admin, worker, sender, stranger]);
    await h.client(admin.token).createQueue({ name: "jobs" });
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop()));
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await h.stop();
  });

  const consume = (
    token: string | undefined,
    handler: MessageHandler,
    errors: unknown[],
    options: ConsumerOptions = {},
  ) => {
    const client = new QueueClient(h.server.address, token === undefined ? {} : { token });
    clients.push(client);
    const consumer = client.consume("jobs", handler, {
      subscribe: mode === "subscribe",
      onError: (error) => errors.push(error),
      ...options,
    });
    consumers.push(consumer);
    return consumer;
  };

  it.each([
    { token: sender, options: {}, reason: "PERMISSION_DENIED" },
    { token: stranger, options: {}, reason: "PERMISSION_DENIED" },
    { token: sender, options: { visibilityTimeoutMs: 5_000 }, reason: "PERMISSION_DENIED" },
    { token: unknown, options: {}, reason: "TOKEN_INVALID" },
    { token: undefined, options: {}, reason: "TOKEN_MISSING" },
  ])("rejects done at once with $reason for the token $token.name ($options)", async ({ token, options, reason }) => {
    const errors: unknown[] = [];
    const consumer = consume(token?.token, () => undefined, errors, options);
    await expect(consumer.done).rejects.toMatchObject({ reason });
    expect(errors).toEqual([withReason(reason)]);
    await sleep(quietMs);
    expect(errors).toHaveLength(1);
  });

  it("stops, rejecting done, when its token loses the permission while it runs", async () => {
    const errors: unknown[] = [];
    const handled: string[] = [];
    const consumer = consume(worker.token, (message) => void handled.push(text(message.body)), errors);
    await h.client(admin.token).send({ queue: "jobs", body: Buffer.from("before") });
    await vi.waitFor(() => expect(handled).toEqual(["before"]), { timeout: 10_000 });

    await h.writeTokens([
      admin,
      { ...worker, entry: { ...worker.entry, permissions: [{ queues: "jobs", allow: ["send"] }] } },
    ]);
    expect(await h.server.reloadAuth()).toBe(true);
    // The stream meets the refusal at its next request (this message's ack), a receive at its next call.
    await h.client(admin.token).send({ queue: "jobs", body: Buffer.from("after") });
    await expect(consumer.done).rejects.toMatchObject({ reason: "PERMISSION_DENIED" });
    expect(errors).toContainEqual(withReason("PERMISSION_DENIED"));
  });
});

describe.each(consumerModes)("a Consumer keeps retrying what may pass ($mode)", ({ mode }) => {
  it("UNAVAILABLE: its broker is down when it starts, and comes back", async () => {
    const port = await freePort();
    const dir = await makeTempDir();
    const startBroker = () => startHoldshelfServer({ dataDir: dir.path, listen: `127.0.0.1:${port}` });
    // An admin client of its own channel pool: the consumer's failing connection is not shared with it.
    const adminOf = (address: string) =>
      new QueueClient(address, { channelOptions: { "grpc.use_local_subchannel_pool": 1 } });
    let server = await startBroker();
    let admin = adminOf(server.address);
    await admin.createQueue("jobs");
    await admin.close();
    await server.shutdown();

    const client = new QueueClient(`127.0.0.1:${port}`);
    const errors: unknown[] = [];
    const handled: string[] = [];
    const consumer = client.consume("jobs", (message) => void handled.push(text(message.body)), {
      subscribe: mode === "subscribe",
      onError: (error) => errors.push(error),
    });
    try {
      await vi.waitFor(() => expect(errors).toContainEqual(expect.objectContaining({ code: status.UNAVAILABLE })), {
        timeout: 10_000,
      });
      server = await startBroker();
      admin = adminOf(server.address);
      await admin.send("jobs", "after the outage");
      await admin.close();
      await vi.waitFor(() => expect(handled).toEqual(["after the outage"]), { timeout: 15_000 });
      expect(await doneState(consumer)).toBe("pending");
    } finally {
      await consumer.stop();
      await client.close();
      await server.shutdown();
      await dir.remove();
    }
  });

  it("QUEUE_MOVING: the queue's GetQueue answered as by a cluster moving it, twice, then served", async () => {
    const h = await startGrpcHarness();
    const client = new QueueClient(h.server.address);
    let moving = 2;
    const moved: ConsumerClient = {
      getQueue: (name) => {
        if (moving-- > 0) return Promise.reject(new RpcError(status.UNAVAILABLE, "QUEUE_MOVING", "moving"));
        return client.getQueue(name);
      },
      receive: (queue, options) => client.receive(queue, options),
      delete: (queue, handle) => client.delete(queue, handle),
      changeVisibilityBatch: (queue, handles, ms) => client.changeVisibilityBatch(queue, handles, ms),
      heartbeat: () => client.heartbeat(),
      ...(mode === "subscribe" ? { subscribe: () => client.subscribe() } : {}),
    };
    await h.rpc.createQueue({ name: "jobs" });
    const errors: unknown[] = [];
    const handled: string[] = [];
    const consumer = new Consumer(moved, "jobs", (message) => void handled.push(text(message.body)), {
      onError: (error) => errors.push(error),
    });
    try {
      await client.send("jobs", "after the move");
      await vi.waitFor(() => expect(handled).toEqual(["after the move"]), { timeout: 10_000 });
      expect(errors).toEqual([withReason("QUEUE_MOVING"), withReason("QUEUE_MOVING")]);
      expect(await doneState(consumer)).toBe("pending");
    } finally {
      await consumer.stop();
      await client.close();
      await h.stop();
    }
  });
});

describe.each(consumerModes)("a Consumer whose queue is deleted while it runs ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
    await c.admin.createQueue("jobs", { visibilityTimeoutMs: 3_000 });
  });
  afterEach(async () => {
    await c.stop();
  });

  it("cancels the handler whose lease went with it, stops, and rejects done with QUEUE_NOT_FOUND", async () => {
    const cancelled: unknown[] = [];
    const consumer = c.consume("jobs", async (_message, ctx) => {
      await aborted(ctx.signal);
      cancelled.push(ctx.signal.reason);
    });
    await c.admin.send("jobs", "in hand");
    await vi.waitFor(() => expect(consumer.active).toBe(1), { timeout: 10_000 });

    const deleted = Date.now();
    await c.admin.deleteQueue("jobs");
    await expect(consumer.done).rejects.toMatchObject({ reason: "QUEUE_NOT_FOUND" });
    // Not after the 10 s grace period: the handler's ack cannot reach the broker, and fails at once.
    expect(Date.now() - deleted).toBeLessThan(5_000);
    expect(cancelled).toEqual([expect.any(LeaseLostError)]);
    expect(consumer.active).toBe(0);
    expect(c.errors).toContainEqual(withReason("QUEUE_NOT_FOUND"));
  });
});
