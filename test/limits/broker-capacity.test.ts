import { create } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { HeartbeatRequestSchema, type HeartbeatResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { maxCheckpointBytes } from "../../src/protocol/limits.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startLimitsHarness, type LimitsHarness } from "./limits-harness.js";

const longPoll = { seconds: 20n };
const body = (text: string) => Buffer.from(text);
const bodies = (answer: { messages: { body: Uint8Array }[] }) =>
  answer.messages.map((m) => Buffer.from(m.body).toString());

describe("broker-wide capacity limits", () => {
  let h: LimitsHarness;
  afterEach(() => h.stop());

  it("refuses long polls past the limit with TOO_MANY_WAITING_RECEIVES; short polls and sends go on; room comes back", async () => {
    h = await startLimitsHarness({ maxWaitingReceives: 2 });
    const [a, b] = [h.connect(), h.connect()];
    await a.createQueue({ name: "idle" });
    await a.createQueue({ name: "busy" });
    const waiting = [
      a.receive({ queue: "idle", waitTime: longPoll }),
      b.receive({ queue: "idle", waitTime: longPoll }),
    ];
    await expect.poll(() => h.server.broker.waitingReceiveCount, { timeout: 10_000 }).toBe(2);

    const refused = await expectRpcError(
      b.receive({ queue: "busy", waitTime: longPoll }),
      status.RESOURCE_EXHAUSTED,
      "TOO_MANY_WAITING_RECEIVES",
    );
    expect(refused.message).toContain("--max-waiting-receives 2");
    // Short polls never wait, so they are served; a long poll that finds a message at once never waits either.
    await b.send({ queue: "busy", body: body("one") });
    expect(bodies(await b.receive({ queue: "busy", waitTime: longPoll }))).toEqual(["one"]);
    expect((await b.receive({ queue: "busy" })).messages).toEqual([]);

    // Answering one waiter makes room for one long poll, which then waits and is served.
    await b.send({ queue: "idle", body: body("two") });
    expect(bodies(await waiting[0]!)).toEqual(["two"]);
    const next = a.receive({ queue: "busy", waitTime: longPoll });
    await expect.poll(() => h.server.broker.waitingReceiveCount, { timeout: 10_000 }).toBe(2);
    await b.send({ queue: "busy", body: body("three") });
    await b.send({ queue: "idle", body: body("four") });
    expect([bodies(await next), bodies(await waiting[1]!)]).toEqual([["three"], ["four"]]);
    expect(h.server.broker.waitingReceiveCount).toBe(0);
  });

  it("refuses a new queue past the limit with TOO_MANY_QUEUES, even when creations race; existing queues and retries go on", async () => {
    h = await startLimitsHarness({ maxQueues: 3 });
    const client = h.connect();
    const names = ["a", "b", "c", "d", "e"];
    const outcomes = await Promise.allSettled(names.map((name) => client.createQueue({ name })));
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(3);
    await expectRpcError(client.createQueue({ name: "f" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_QUEUES");
    const { queues } = await client.listQueues({});
    expect(queues).toHaveLength(3);
    const [first, , third] = queues.map((queue) => queue.name);

    // A retry of an existing creation is still OK at the limit, and the queues work.
    await client.createQueue({ name: first! });
    await client.send({ queue: first!, body: body("x") });
    expect(bodies(await client.receive({ queue: first! }))).toEqual(["x"]);

    // Deleting a queue makes room for one.
    await client.deleteQueue({ name: third! });
    await client.createQueue({ name: "f" });
    await expectRpcError(client.createQueue({ name: "g" }), status.RESOURCE_EXHAUSTED, "TOO_MANY_QUEUES");
  });

  it("refuses sends past the stored-message limit with BROKER_FULL, storing nothing of the refused batch; consuming makes room", async () => {
    h = await startLimitsHarness({ maxStoredMessages: 10 });
    const client = h.connect();
    await client.createQueue({ name: "q" });
    await client.createQueue({ name: "r" });
    await client.sendBatch({ queue: "q", entries: Array.from({ length: 8 }, (_, i) => ({ body: body(`m${i}`) })) });
    const refused = await expectRpcError(
      client.sendBatch({ queue: "r", entries: [{ body: body("1") }, { body: body("2") }, { body: body("3") }] }),
      status.RESOURCE_EXHAUSTED,
      "BROKER_FULL",
    );
    expect(refused.message).toContain("at most 10");
    expect((await client.getQueue({ name: "r" })).queue?.stats?.visible).toBe(0n);

    // Concurrent sends cannot pass the limit together.
    const sends = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => client.send({ queue: "r", body: body(`s${i}`) })),
    );
    expect(sends.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(2);

    // Receives and deletes go on; deleting makes room again.
    const received = await client.receive({ queue: "q", maxMessages: 3 });
    await client.deleteBatch({ queue: "q", receiptHandles: received.messages.map((m) => m.receiptHandle) });
    await client.sendBatch({ queue: "r", entries: [{ body: body("1") }, { body: body("2") }, { body: body("3") }] });
    await expectRpcError(client.send({ queue: "r", body: body("over") }), status.RESOURCE_EXHAUSTED, "BROKER_FULL");
  });

  it("refuses FIFO sends past the deduplication-id limit with BROKER_FULL, still answers repeats, and takes sends again as ids leave the window", async () => {
    const clock = new FakeClock();
    h = await startLimitsHarness({ maxDeduplicationIds: 4 }, clock);
    const client = h.connect();
    for (const name of ["a.fifo", "b.fifo"]) await client.createQueue({ name, config: { fifo: true } });
    const entry = (id: string) => ({ body: body(id), messageGroupId: "g", deduplicationId: id });
    const visible = async (queue: string) => (await client.getQueue({ name: queue })).queue?.stats?.visible;
    const { messageIds } = await client.sendBatch({ queue: "a.fifo", entries: ["1", "2", "3"].map(entry) });

    // The windows of all FIFO queues count together; a batch is refused whole.
    const refused = await expectRpcError(
      client.sendBatch({ queue: "b.fifo", entries: [entry("x"), entry("y")] }),
      status.RESOURCE_EXHAUSTED,
      "BROKER_FULL",
    );
    expect(refused.message).toContain("--max-deduplication-ids 4");
    expect(await visible("b.fifo")).toBe(0n);
    // The refused ids were not remembered: "x" alone fits and is stored, not taken for a repeat.
    await client.send({ queue: "b.fifo", ...entry("x") });
    expect(await visible("b.fifo")).toBe(1n);
    await expectRpcError(client.send({ queue: "b.fifo", ...entry("y") }), status.RESOURCE_EXHAUSTED, "BROKER_FULL");
    // A repeat remembers nothing new: it is answered at the limit. Standard queues are not bounded by it.
    expect((await client.send({ queue: "a.fifo", ...entry("1") })).messageId).toBe(messageIds[0]);
    await client.createQueue({ name: "plain" });
    await client.send({ queue: "plain", body: body("p") });

    // Once five minutes have passed, the sweep (every second) lets the ids go.
    clock.advance(5 * 60_000);
    await expect
      .poll(
        async () => {
          clock.advance(1000);
          return client.send({ queue: "b.fifo", ...entry("y") }).then(
            () => "stored",
            (error: Error) => error.message,
          );
        },
        { timeout: 10_000 },
      )
      .toBe("stored");
    expect(await visible("b.fifo")).toBe(2n);
  });

  it("TOO_MANY_IN_FLIGHT is RESOURCE_EXHAUSTED at max_in_flight, clears as leases end, and max_in_flight has a sane upper bound", async () => {
    h = await startLimitsHarness({});
    const client = h.connect();
    await expectRpcError(
      client.createQueue({ name: "huge", config: { maxInFlight: 1_000_001 } }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.max_in_flight",
    );
    await client.createQueue({ name: "q", config: { maxInFlight: 2 } });
    await client.createQueue({ name: "other", config: { maxInFlight: 2 } });
    await client.sendBatch({ queue: "q", entries: [{ body: body("1") }, { body: body("2") }, { body: body("3") }] });
    const held = await client.receive({ queue: "q", maxMessages: 10 });
    expect(held.messages).toHaveLength(2);
    const refused = await expectRpcError(
      client.receive({ queue: "q" }),
      status.RESOURCE_EXHAUSTED,
      "TOO_MANY_IN_FLIGHT",
    );
    expect(refused.message).toContain("2 messages in flight");
    // Another queue is not affected.
    await client.send({ queue: "other", body: body("x") });
    expect(bodies(await client.receive({ queue: "other" }))).toEqual(["x"]);
    await client.delete({ queue: "q", receiptHandle: held.messages[0]!.receiptHandle });
    expect(bodies(await client.receive({ queue: "q" }))).toEqual(["3"]);
  });

  it("a checkpoint of 64 KiB is stored and one byte more is refused in its renewal (INVALID_ARGUMENT), the lease still held", async () => {
    h = await startLimitsHarness({});
    const client = h.connect();
    await client.createQueue({ name: "q" });
    await client.send({ queue: "q", body: body("job") });
    const [message] = (await client.receive({ queue: "q" })).messages;
    const stream = client.heartbeat();
    const answers: HeartbeatResponse[] = [];
    const answered = (count: number) =>
      new Promise<void>((resolve) => {
        const check = (): void => void (answers.length >= count && resolve());
        stream.on("data", (response: HeartbeatResponse) => {
          answers.push(response);
          check();
        });
        check();
      });
    const renew = (checkpoint: Buffer) =>
      create(HeartbeatRequestSchema, { queue: "q", leases: [{ receiptHandle: message!.receiptHandle, checkpoint }] });
    stream.write(renew(Buffer.alloc(maxCheckpointBytes, 1)));
    stream.write(renew(Buffer.alloc(maxCheckpointBytes + 1, 2)));
    await answered(2);
    expect(answers.map((a) => ({ held: a.leases[0]!.held, reason: a.leases[0]!.reason }))).toEqual([
      { held: true, reason: "" },
      { held: false, reason: "INVALID_ARGUMENT" },
    ]);
    stream.end();
    // The lease is still this consumer's: it releases it, and the next delivery carries the 64 KiB checkpoint.
    await client.changeVisibility({ queue: "q", receiptHandle: message!.receiptHandle, visibilityTimeout: {} });
    const [again] = (await client.receive({ queue: "q" })).messages;
    expect(again!.checkpoint?.byteLength).toBe(maxCheckpointBytes);
  });
});
