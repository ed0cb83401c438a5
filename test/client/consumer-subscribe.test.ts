import { InterceptingCall, status, type Interceptor } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Consumer, ConsumerOptions, MessageHandler } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { startQueueServiceProxy, type QueueServiceProxy } from "../support/queue-service-proxy.js";
import { text } from "../support/text.js";
import { deferred, sleep } from "./consumer-harness.js";

// What the Subscribe path does that the Receive path does not: everything on
// one stream, credit by bytes, and a reconnect after the broker ends the
// stream with UNAVAILABLE. The behaviours both paths share run on both in
// consumer-leases, -retries, -stop and -fifo.
describe("the Consumer on Subscribe", () => {
  let h: GrpcHarness;
  let admin: QueueClient;
  let client: QueueClient | undefined;
  let proxy: QueueServiceProxy | undefined;
  const consumers: Consumer[] = [];
  const errors: unknown[] = [];
  /** The RPCs the consumer's client started, by method name. */
  const methods: string[] = [];
  const recorder: Interceptor = (options, nextCall) => {
    methods.push(options.method_definition.path.split("/").at(-1)!);
    return new InterceptingCall(nextCall(options));
  };

  beforeEach(async () => {
    h = await startGrpcHarness();
    admin = new QueueClient(h.server.address);
    await admin.createQueue("jobs", { visibilityTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop()));
    await client?.close();
    await proxy?.stop();
    client = undefined;
    proxy = undefined;
    await admin.close();
    await h.stop();
    errors.splice(0);
    methods.splice(0);
  });

  const consume = (address: string, handler: MessageHandler, options: ConsumerOptions = {}): Consumer => {
    client = new QueueClient(address, { channelOptions: { interceptors: [recorder] } });
    const consumer = client.consume("jobs", handler, { onError: (error) => errors.push(error), ...options });
    consumers.push(consumer);
    return consumer;
  };
  const stats = async () => (await admin.getQueue("jobs")).stats;

  it("takes, renews, checkpoints, fails and acks every message on its one stream: no other RPC", async () => {
    await admin.sendBatch(
      "jobs",
      Array.from({ length: 12 }, (_, i) => ({ body: `m${i}` })),
    );
    const handled = new Set<string>();
    let failed = false;
    consume(
      h.server.address,
      async (message, context) => {
        // Past a renewal (a third of the 1 s lease), with a checkpoint on the way.
        await sleep(400);
        await context.checkpoint(Buffer.from("half"));
        if (text(message.body) === "m3" && !failed) {
          failed = true;
          throw new Error("once");
        }
        handled.add(text(message.body));
      },
      { concurrency: 4 },
    );
    await vi.waitFor(() => expect(handled.size).toBe(12), { timeout: 15_000 });
    await vi.waitFor(async () => expect(await stats()).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 }));
    // GetQueue: the lease length, read once.
    expect(methods).toEqual(["GetQueue", "Subscribe"]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe("once");
  });

  it("stops taking messages once those it holds reach maxOutstandingBytes: each larger one comes alone", async () => {
    await admin.sendBatch("jobs", [{ body: "a".repeat(600) }, { body: "b".repeat(600) }, { body: "c".repeat(600) }]);
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    consume(
      h.server.address,
      async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await sleep(150);
        running--;
        done++;
      },
      { concurrency: 5, maxOutstandingBytes: 500 },
    );
    await vi.waitFor(() => expect(done).toBe(3), { timeout: 10_000 });
    expect(maxRunning).toBe(1);
    expect(errors).toEqual([]);
  });

  it("opens a new stream when the broker ends one with UNAVAILABLE: the leases it held stay its own, and their acks work", async () => {
    proxy = await startQueueServiceProxy(h.server.address, { subscribe: true });
    await admin.send("jobs", "survivor");
    const started = deferred();
    const finish = deferred();
    const deliveries: number[] = [];
    consume(
      proxy.address,
      async (message, context) => {
        deliveries.push(message.receiveCount);
        started.resolve();
        await finish.promise;
        expect(context.signal.aborted).toBe(false);
      },
      { visibilityTimeoutMs: 1000 },
    );
    await started.promise;
    proxy.endSubscribeStreams();
    await vi.waitFor(() => expect(proxy!.subscribeCalls).toBe(2));
    // Past the lease's length: only renewals on the new stream kept it.
    await sleep(1500);
    expect(await stats()).toMatchObject({ visible: 0, inFlight: 1 });
    finish.resolve();
    await vi.waitFor(async () => expect(await stats()).toMatchObject({ visible: 0, inFlight: 0 }));
    expect(deliveries).toEqual([1]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RpcError);
    expect((errors[0] as RpcError).code).toBe(status.UNAVAILABLE);
  });
});
