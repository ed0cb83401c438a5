import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Consumer } from "../../src/client/consumer.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { text } from "../support/text.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { startQueueServiceProxy, type QueueServiceProxy } from "../support/queue-service-proxy.js";
import { deferred } from "./consumer-harness.js";

// A real broker behind a stand-in that serves QueueService as a broker from
// before Subscribe would (UNIMPLEMENTED), or passes Subscribe through.
describe("the Consumer's choice of path", () => {
  let h: GrpcHarness;
  let proxy: QueueServiceProxy;
  let client: QueueClient;
  let consumer: Consumer | undefined;
  const errors: unknown[] = [];

  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "jobs" });
  });
  afterEach(async () => {
    await consumer?.stop();
    consumer = undefined;
    await client.close();
    await proxy.stop();
    await h.stop();
    errors.splice(0);
  });

  const connect = async (subscribe: boolean) => {
    proxy = await startQueueServiceProxy(h.server.address, { subscribe });
    client = new QueueClient(proxy.address);
  };

  it("falls back to Receive and Heartbeat when the broker answers Subscribe with UNIMPLEMENTED, and reports nothing", async () => {
    await connect(false);
    await client.send("jobs", "first");
    const handled: string[] = [];
    const checkpointed = deferred();
    consumer = client.consume(
      "jobs",
      async (message, context) => {
        // A checkpoint is a renewal: on this path it goes on the Heartbeat stream.
        await context.checkpoint(Buffer.from("1"));
        handled.push(text(message.body));
        checkpointed.resolve();
      },
      { visibilityTimeoutMs: 5000, onError: (error) => errors.push(error) },
    );
    await checkpointed.promise;
    await client.send("jobs", "second");
    await vi.waitFor(() => expect(handled).toEqual(["first", "second"]), { timeout: 10_000 });
    await vi.waitFor(async () =>
      expect((await client.getQueue("jobs")).stats).toMatchObject({ visible: 0, inFlight: 0 }),
    );
    // One try of Subscribe, then Receive for good.
    expect(proxy.subscribeCalls).toBe(1);
    expect(errors).toEqual([]);
  });

  it("takes the Receive path from the start with subscribe: false", async () => {
    await connect(true);
    await client.send("jobs", "only");
    const handled = deferred<string>();
    consumer = client.consume("jobs", (message) => handled.resolve(text(message.body)), {
      subscribe: false,
      visibilityTimeoutMs: 5000,
      onError: (error) => errors.push(error),
    });
    expect(await handled.promise).toBe("only");
    await vi.waitFor(async () =>
      expect((await client.getQueue("jobs")).stats).toMatchObject({ visible: 0, inFlight: 0 }),
    );
    expect(proxy.subscribeCalls).toBe(0);
    expect(errors).toEqual([]);
  });
});
