import { InterceptingCall, status, type Interceptor } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BatchingOptions } from "../../src/client/publish-batcher.js";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";
import { sleep } from "../support/wait.js";

/** One call the client made: its method, and for a SendBatch its entry count. */
interface Call {
  readonly method: string;
  readonly entries?: number;
}

// QueueClient.send's batching against a real broker; what went over the wire
// is seen by an interceptor on the client's channel.
describe("QueueClient's batching of sends", () => {
  let h: GrpcHarness;
  let admin: QueueClient;
  const clients: QueueClient[] = [];
  const calls: Call[] = [];
  const sendCalls = () => calls.filter((call) => call.method === "Send" || call.method === "SendBatch");

  const recorder: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      sendMessage(message: { entries?: unknown[] }, next) {
        const method = options.method_definition.path.split("/").at(-1)!;
        calls.push(method === "SendBatch" ? { method, entries: message.entries?.length ?? 0 } : { method });
        next(message);
      },
    });
  const connect = (batching: BatchingOptions): QueueClient => {
    const client = new QueueClient(h.server.address, { batching, channelOptions: { interceptors: [recorder] } });
    clients.push(client);
    return client;
  };
  const bodies = async (queue: string, count: number) => {
    const got: string[] = [];
    while (got.length < count) {
      const messages = await admin.receive(queue, { maxMessages: 10, waitTimeMs: 2000 });
      if (messages.length === 0) break;
      got.push(...messages.map((message) => text(message.body)));
    }
    return got;
  };

  beforeEach(async () => {
    h = await startGrpcHarness();
    admin = new QueueClient(h.server.address);
    await admin.createQueue("jobs");
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    calls.splice(0);
    await admin.close();
    await h.stop();
  });

  it("gathers concurrent sends into one SendBatch, each send getting its own message id", async () => {
    const client = connect({ delayMs: 50 });
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => client.send("jobs", `m${i}`)));
    expect(new Set(ids).size).toBe(10);
    expect(sendCalls()).toEqual([{ method: "SendBatch", entries: 10 }]);
    expect(await bodies("jobs", 10)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
  });

  it("sends a batch once it holds maxMessages, without waiting for the delay; close() sends the rest", async () => {
    const client = connect({ maxMessages: 3, delayMs: 60_000 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => client.send("jobs", `m${i}`)));
    expect(sendCalls()).toEqual([
      { method: "SendBatch", entries: 3 },
      { method: "SendBatch", entries: 3 },
    ]);
    // A batch of one waits for its delay (a minute here)...
    let sent = false;
    const last = client.send("jobs", "m6").then(() => (sent = true));
    await sleep(300);
    expect(sent).toBe(false);
    // ...unless the client closes.
    await client.close();
    await last;
    expect(sendCalls()).toEqual([
      { method: "SendBatch", entries: 3 },
      { method: "SendBatch", entries: 3 },
      { method: "SendBatch", entries: 1 },
    ]);
    expect(await bodies("jobs", 7)).toEqual(Array.from({ length: 7 }, (_, i) => `m${i}`));
  });

  it("cuts batches at maxBytes, and sends a message too large for any batch alone as a unary Send", async () => {
    const client = connect({ maxBytes: 1000, delayMs: 60_000 });
    const body = (tag: string, size: number) => tag + "x".repeat(size - tag.length);
    await Promise.all([
      client.send("jobs", body("a", 400)),
      client.send("jobs", body("b", 400)),
      client.send("jobs", body("c", 400)),
      client.send("jobs", body("big", 1500)),
      client.send("jobs", body("d", 400)),
      client.send("jobs", body("e", 400)),
      client.send("jobs", body("f", 400)),
    ]);
    expect(sendCalls()).toEqual([
      { method: "SendBatch", entries: 2 },
      { method: "SendBatch", entries: 1 },
      { method: "Send" },
      { method: "SendBatch", entries: 2 },
      { method: "SendBatch", entries: 1 },
    ]);
    expect((await bodies("jobs", 7)).map((got) => got.replace(/x+$/, ""))).toEqual([
      "a",
      "b",
      "c",
      "big",
      "d",
      "e",
      "f",
    ]);
  });

  it("fails only the send an entry error names, with Send's field, and stores the others", async () => {
    const client = connect({ delayMs: 50 });
    const outcomes = await Promise.allSettled([
      client.send("jobs", "ok-1"),
      client.send("jobs", "bad", { typedAttributes: { x: { dataType: "Bogus", value: "1" } } }),
      client.send("jobs", "ok-2"),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const error = (outcomes[1] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: status.INVALID_ARGUMENT, reason: "INVALID_ARGUMENT" });
    expect((error as RpcError).violations.map((v) => v.field)).toEqual(['typed_attributes["x"].data_type']);
    expect(sendCalls()).toEqual([
      { method: "SendBatch", entries: 3 },
      { method: "SendBatch", entries: 2 },
    ]);
    expect(await bodies("jobs", 2)).toEqual(["ok-1", "ok-2"]);
  });

  it("fails every send of a batch with the batch's own error", async () => {
    const client = connect({ delayMs: 50 });
    const outcomes = await Promise.allSettled([client.send("nowhere", "a"), client.send("nowhere", "b")]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ reason: "QUEUE_NOT_FOUND" });
    }
    expect(sendCalls()).toEqual([{ method: "SendBatch", entries: 2 }]);
  });

  it("keeps a FIFO group's send order across batches, sequence numbers rising in send order", async () => {
    await admin.createQueue("orders.fifo", { fifo: true });
    const client = connect({ maxMessages: 7, delayMs: 5 });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        client.sendWithResult("orders.fifo", `o${i}`, { messageGroupId: "g", deduplicationId: `d${i}` }),
      ),
    );
    const sequence = results.map((result) => BigInt(result.sequenceNumber!));
    expect(sequence).toEqual([...sequence].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(sendCalls().length).toBeGreaterThan(1);
    const got: string[] = [];
    while (got.length < 30) {
      const messages = await admin.receive("orders.fifo", { maxMessages: 10 });
      got.push(...messages.map((message) => text(message.body)));
      await admin.deleteBatch(
        "orders.fifo",
        messages.map((message) => message.receiptHandle),
      );
    }
    expect(got).toEqual(Array.from({ length: 30 }, (_, i) => `o${i}`));
  });

  it("with delayMs 0 sends each message alone as a unary Send", async () => {
    const client = connect({ delayMs: 0 });
    await Promise.all([client.send("jobs", "a"), client.send("jobs", "b")]);
    expect(sendCalls()).toEqual([{ method: "Send" }, { method: "Send" }]);
  });

  it("refuses batch settings out of range", () => {
    expect(() => connect({ maxMessages: 101 })).toThrow(RangeError);
    expect(() => connect({ maxBytes: 4 * 1024 * 1024 + 1 })).toThrow(RangeError);
    expect(() => connect({ delayMs: -1 })).toThrow(RangeError);
  });
});
