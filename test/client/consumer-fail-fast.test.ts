import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Consumer, type ConsumerClient } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { stopOnSignals } from "../../src/client/stop-on-signals.js";
import { startHoldshelfServer } from "../../src/server/holdshelf-server.js";
import { makeToken, startAuthHarness, type AuthHarness } from "../security/auth-harness.js";
import { freePort } from "../support/free-port.js";
import { startGrpcHarness } from "../support/grpc-harness.js";
import { makeTempDir } from "../support/temp-dir.js";
import { text } from "../support/text.js";
import { sleep, startConsumerHarness, type ConsumerHarness, consumerModes } from "./consumer-harness.js";

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
  // May see "jobs" (GetQueue) but not receive from it: refused on the stream, or on Receive.
  const sender = makeToken("sender", { queues: "jobs", allow: ["send"] });
  // Holds nothing on "jobs": refused as early as GetQueue.
  const stranger = makeToken("stranger", { queues: "other-*", allow: ["receive"] });
  let h: AuthHarness;
  const clients: QueueClient[] = [];
  const consumers: Consumer[] = [];
  beforeEach(async () => {
    h = await startAuthHarness([admin, sender, stranger]);
    await h.client(admin.token).createQueue({ name: "jobs" });
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop()));
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await h.stop();
  });

  it.each([
    { token: sender, options: {} },
    { token: stranger, options: {} },
    { token: sender, options: { visibilityTimeoutMs: 5_000 } },
  ])("rejects done at once with PERMISSION_DENIED for the token $token.name ($options)", async ({ token, options }) => {
    const client = new QueueClient(h.server.address, { token: token.token });
    clients.push(client);
    const errors: unknown[] = [];
    const consumer = client.consume("jobs", () => undefined, {
      subscribe: mode === "subscribe",
      onError: (error) => errors.push(error),
      ...options,
    });
    consumers.push(consumer);
    await expect(consumer.done).rejects.toMatchObject({ code: status.PERMISSION_DENIED, reason: "PERMISSION_DENIED" });
    const reported = errors.length;
    await sleep(quietMs);
    expect(errors).toHaveLength(reported);
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
    await c.admin.createQueue("jobs");
  });
  afterEach(async () => {
    await c.stop();
  });

  it("reports QUEUE_NOT_FOUND and keeps trying: a queue created again under the name is consumed", async () => {
    const handled: string[] = [];
    const consumer = c.consume("jobs", (message) => void handled.push(text(message.body)));
    await c.admin.send("jobs", "before");
    await vi.waitFor(() => expect(handled).toEqual(["before"]), { timeout: 10_000 });

    await c.admin.deleteQueue("jobs");
    await vi.waitFor(() => expect(c.errors).toContainEqual(withReason("QUEUE_NOT_FOUND")), { timeout: 10_000 });
    await c.admin.createQueue("jobs");
    await c.admin.send("jobs", "after");
    await vi.waitFor(() => expect(handled).toEqual(["before", "after"]), { timeout: 15_000 });
    expect(await doneState(consumer)).toBe("pending");
  });
});
