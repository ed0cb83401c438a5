import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { LeaseState } from "../../src/client/types.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";

// On a fake clock, every time the server reports is exact.
describe("QueueClient against a real server", () => {
  let h: GrpcHarness;
  let client: QueueClient;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    client = new QueueClient(h.server.address);
    await client.createQueue("work", { visibilityTimeoutMs: 10_000 });
  });
  afterEach(async () => {
    client.close();
    await h.stop();
  });

  it("manages queues with configurations in milliseconds and times as Dates", async () => {
    const created = await client.createQueue("a-1", { maxInFlight: 7, delayMs: 1500, retentionMs: 3_600_000 });
    expect(created).toEqual({
      name: "a-1",
      config: {
        visibilityTimeoutMs: 30_000,
        delayMs: 1500,
        retentionMs: 3_600_000,
        maxMessageBytes: 1_048_576,
        receiveWaitTimeMs: 0,
        maxInFlight: 7,
        maxLeaseDurationMs: 12 * 3_600_000,
        tags: {},
      },
      stats: { visible: 0, inFlight: 0, delayed: 0 },
      createTime: new Date(clock.now()),
      updateTime: new Date(clock.now()),
      deadLetterSourceQueues: [],
    });
    expect(await client.createQueue("a-1", { maxInFlight: 7, delayMs: 1500, retentionMs: 3_600_000 })).toEqual(created);
    await expectRpcError(client.createQueue("a-1"), status.ALREADY_EXISTS, "QUEUE_ALREADY_EXISTS");
    await expectRpcError(
      client.createQueue("bad", { visibilityTimeoutMs: 100 * 86_400_000 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.visibility_timeout",
    );

    await client.createQueue("a-2");
    const first = await client.listQueues({ prefix: "a-", pageSize: 1 });
    expect(first.queues.map((q) => q.name)).toEqual(["a-1"]);
    const second = await client.listQueues({ prefix: "a-", pageSize: 1, pageToken: first.nextPageToken });
    expect(second).toMatchObject({ queues: [{ name: "a-2" }], nextPageToken: "" });
    expect((await client.listQueues()).queues.map((q) => q.name)).toEqual(["a-1", "a-2", "work"]);

    const updated = await client.updateQueue("a-1", { receiveWaitTimeMs: 2000 });
    expect(updated.config).toMatchObject({ receiveWaitTimeMs: 2000, delayMs: 0, maxInFlight: 120_000 });

    await client.sendBatch("a-1", [{ body: "x", delayMs: 5000 }, { body: "y" }]);
    clock.advance(250);
    expect((await client.getQueue("a-1")).stats).toEqual({
      visible: 1,
      inFlight: 0,
      delayed: 1,
      oldestMessageAgeMs: 250,
    });
    expect(await client.purgeQueue("a-1")).toBe(2);

    await client.deleteQueue("a-1");
    await expectRpcError(client.getQueue("a-1"), status.NOT_FOUND, "QUEUE_NOT_FOUND");
  });

  it("creates and updates queues with tags, and reports when the configuration last changed", async () => {
    const created = await client.createQueue("tagged", { tags: { team: "payments" } });
    expect(created.config.tags).toEqual({ team: "payments" });
    expect(created.updateTime).toEqual(created.createTime);
    clock.advance(1500);
    const updated = await client.updateQueue("tagged", { tags: { team: "billing", env: "" } });
    expect(updated.config.tags).toEqual({ team: "billing", env: "" });
    expect(updated.updateTime).toEqual(new Date(created.createTime.getTime() + 1500));
    expect((await client.updateQueue("tagged")).config.tags).toEqual({});
    await expectRpcError(
      client.createQueue("bad", { tags: { "": "v" } }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      'config.tags[""]',
    );
  });

  it("sends and receives plain messages, with delays, attributes, deadlines and receive counts", async () => {
    const sentAt = clock.now();
    const id = await client.send("work", "hello", { attributes: { kind: "greeting" } });
    const [delayedId, bytesId] = await client.sendBatch("work", [
      { body: "later", delayMs: 2000 },
      { body: new Uint8Array([1, 2, 3]) },
    ]);
    const messages = await client.receive("work", { maxMessages: 10, visibilityTimeoutMs: 4000 });
    expect(messages.map((m) => m.messageId)).toEqual([id, bytesId]);
    expect(messages[0]).toEqual({
      messageId: id,
      receiptHandle: expect.any(String),
      body: expect.any(Uint8Array),
      attributes: { kind: "greeting" },
      typedAttributes: {},
      receiveCount: 1,
      sendTime: new Date(sentAt),
      firstReceiveTime: new Date(clock.now()),
      leaseDeadline: new Date(clock.now() + 4000),
    });
    expect(text(messages[0]!.body)).toBe("hello");
    expect([...messages[1]!.body]).toEqual([1, 2, 3]);

    clock.advance(2000);
    expect((await client.receive("work")).map((m) => [m.messageId, text(m.body)])).toEqual([[delayedId, "later"]]);
    clock.advance(2000);
    const again = await client.receive("work", { maxMessages: 10 });
    expect(again.map((m) => m.receiveCount)).toEqual([2, 2]);
    expect(again[0]!.firstReceiveTime).toEqual(messages[0]!.firstReceiveTime);
    await expectRpcError(
      client.send("work", "x", { delayMs: -1 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "delay",
    );
    await expectRpcError(client.receive("nowhere"), status.NOT_FOUND, "QUEUE_NOT_FOUND");
  });

  it("sends typed attributes with send and sendBatch and receives them exactly, binary values as bytes", async () => {
    const typedAttributes = {
      n: { dataType: "Number.int", value: "42" },
      s: { dataType: "String", value: "" },
      b: { dataType: "Binary.gzip", value: Uint8Array.of(0, 255) },
      empty: { dataType: "Binary", value: new Uint8Array(0) },
    };
    await client.send("work", "one", { attributes: { plain: "p" }, typedAttributes });
    await client.sendBatch("work", [{ body: "two", typedAttributes: { n: typedAttributes.n } }]);
    const [one, two] = await client.receive("work", { maxMessages: 2 });
    expect(one!.attributes).toEqual({ plain: "p" });
    expect(Object.keys(one!.typedAttributes)).toEqual(["n", "s", "b", "empty"]);
    expect(one!.typedAttributes["n"]).toEqual({ dataType: "Number.int", value: "42" });
    expect(one!.typedAttributes["s"]).toEqual({ dataType: "String", value: "" });
    expect(one!.typedAttributes["b"]!.dataType).toBe("Binary.gzip");
    expect([...(one!.typedAttributes["b"]!.value as Uint8Array)]).toEqual([0, 255]);
    expect(one!.typedAttributes["empty"]!.value).toBeInstanceOf(Uint8Array);
    expect(two!.typedAttributes).toEqual({ n: { dataType: "Number.int", value: "42" } });
    await expectRpcError(
      client.send("work", "x", { attributes: { n: "1" }, typedAttributes: { n: typedAttributes.n } }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      'typed_attributes["n"]',
    );
  });

  it("peekMessages pages through messages with Dates and states, leasing nothing", async () => {
    const sent = clock.now();
    const first = await client.send("work", "first", { attributes: { kind: "a" } });
    const second = await client.send("work", "second", { delayMs: 2_000 });
    clock.advance(10);
    const [delivery] = await client.receive("work");
    expect(delivery!.messageId).toBe(first);
    const page = await client.peekMessages("work", { pageSize: 1 });
    expect(page.nextPageToken).not.toBe("");
    expect(page.messages).toEqual([
      {
        messageId: first,
        body: expect.anything(),
        attributes: { kind: "a" },
        typedAttributes: {},
        receiveCount: 1,
        sendTime: new Date(sent),
        firstReceiveTime: new Date(sent + 10),
        state: "IN_FLIGHT",
        leaseDeadline: new Date(sent + 10 + 10_000),
        checkpointSize: 0,
      },
    ]);
    expect(text(page.messages[0]!.body)).toBe("first");
    const rest = await client.peekMessages("work", { pageToken: page.nextPageToken });
    expect(rest.nextPageToken).toBe("");
    expect(rest.messages).toEqual([
      expect.objectContaining({
        messageId: second,
        state: "DELAYED",
        visibleTime: new Date(sent + 2_000),
        receiveCount: 0,
      }),
    ]);
    expect(rest.messages[0]).not.toHaveProperty("firstReceiveTime");
    await expectRpcError(
      client.peekMessages("work", { pageSize: 500 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_size",
    );
  });

  it("deletes and changes leases, one at a time and in batches, with failures as RpcError", async () => {
    await client.sendBatch("work", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const [a, b, c] = await client.receive("work", { maxMessages: 3 });

    const deadline = await client.changeVisibility("work", a!.receiptHandle, 60_000);
    expect(deadline).toEqual(new Date(clock.now() + 60_000));
    expect(await client.delete("work", b!.receiptHandle)).toBe("deleted");
    // Deleting a message that is gone succeeds, saying so.
    expect(await client.delete("work", b!.receiptHandle)).toBe("already-deleted");
    await expectRpcError(client.changeVisibility("work", b!.receiptHandle, 0), status.NOT_FOUND, "MESSAGE_NOT_FOUND");

    const changed = await client.changeVisibilityBatch("work", [a!.receiptHandle, "forged", c!.receiptHandle], 5000);
    expect(changed.map((r) => [r.receiptHandle, r.error?.reason, r.leaseDeadline])).toEqual([
      [a!.receiptHandle, undefined, new Date(clock.now() + 5000)],
      ["forged", "RECEIPT_HANDLE_INVALID", undefined],
      [c!.receiptHandle, undefined, new Date(clock.now() + 5000)],
    ]);
    expect(changed[1]!.error).toBeInstanceOf(RpcError);
    expect(changed[1]!.error!.code).toBe(status.INVALID_ARGUMENT);

    clock.advance(5000);
    const [cAgain, aAgain] = await client.receive("work", { maxMessages: 2 });
    expect([cAgain!.messageId, aAgain!.messageId].sort()).toEqual([a!.messageId, c!.messageId].sort());
    const deleted = await client.deleteBatch("work", [c!.receiptHandle, cAgain!.receiptHandle, aAgain!.receiptHandle]);
    expect(deleted.map((r) => [r.error?.code, r.error?.reason, r.deleteOutcome])).toEqual([
      [status.FAILED_PRECONDITION, "LEASE_SUPERSEDED", undefined],
      [undefined, undefined, "deleted"],
      [undefined, undefined, "deleted"],
    ]);
    expect((await client.getQueue("work")).stats).toMatchObject({ visible: 0, inFlight: 0 });
  });

  it("a receive whose signal aborts fails with CANCELLED and takes nothing", async () => {
    const controller = new AbortController();
    const poll = client.receive("work", { waitTimeMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expectRpcError(poll, status.CANCELLED, "");
    await expectRpcError(client.receive("work", { signal: controller.signal }), status.CANCELLED, "");
    await client.send("work", "x");
    expect((await client.receive("work")).map((m) => m.receiveCount)).toEqual([1]);
  });

  it("heartbeat() renews, checkpoints and releases over a typed duplex, in order", async () => {
    const id = await client.send("work", "job");
    const [message] = await client.receive("work", { visibilityTimeoutMs: 1000 });
    const stream = client.heartbeat();
    const responses = stream[Symbol.asyncIterator]();
    const next = async (): Promise<LeaseState[]> => (await responses.next()).value as LeaseState[];

    stream.send({ queue: "work", releaseOnDisconnect: true, leases: [] });
    expect(await next()).toEqual([]);
    stream.send({
      queue: "work",
      leases: [
        { receiptHandle: message!.receiptHandle, visibilityTimeoutMs: 3000, checkpoint: Buffer.from("half") },
        { receiptHandle: "forged" },
      ],
    });
    expect(await next()).toEqual([
      { receiptHandle: message!.receiptHandle, held: true, reason: "", leaseDeadline: new Date(clock.now() + 3000) },
      { receiptHandle: "forged", held: false, reason: "RECEIPT_HANDLE_INVALID" },
    ]);
    stream.send({ queue: "work", leases: [{ receiptHandle: message!.receiptHandle, visibilityTimeoutMs: 0 }] });
    expect(await next()).toMatchObject([{ held: false, reason: "RELEASED" }]);
    stream.end();
    expect(await responses.next()).toEqual({ done: true, value: undefined });

    const [again] = await client.receive("work");
    expect(again).toMatchObject({ messageId: id, receiveCount: 2 });
    expect(text(again!.checkpoint!)).toBe("half");
  });

  it("heartbeat() on an unknown queue ends with QUEUE_NOT_FOUND as RpcError", async () => {
    const stream = client.heartbeat();
    stream.send({ queue: "nowhere", leases: [] });
    const error = await (async () => {
      for await (const states of stream) void states;
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: status.NOT_FOUND, reason: "QUEUE_NOT_FOUND" });
  });
});
