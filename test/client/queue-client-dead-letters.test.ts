import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { text } from "../support/text.js";
import { sleep } from "../support/wait.js";

const redrivePolicy = { deadLetterQueue: "dlq", maxReceiveCount: 1 };
const retryPolicy = { minBackoffMs: 500, maxBackoffMs: 4000 };

// On a fake clock, a lease ends exactly when the test advances past it.
describe("QueueClient with dead-letter queues against a real server", () => {
  let h: GrpcHarness;
  let client: QueueClient;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    client = new QueueClient(h.server.address);
    await client.createQueue("dlq");
    await client.createQueue("work", { visibilityTimeoutMs: 1000, redrivePolicy, retryPolicy });
  });
  afterEach(async () => {
    client.close();
    await h.stop();
  });

  // The server moves a dead-lettered message in the background, after the
  // lease ends: poll for it in short turns rather than guess one long sleep.
  async function untilVisible(queue: string, count: number): Promise<void> {
    for (let turn = 0; turn < 50 && (await client.getQueue(queue)).stats.visible !== count; turn++) await sleep(20);
    expect((await client.getQueue(queue)).stats.visible).toBe(count);
  }

  it("creates, reads back and clears redrive and retry policies, and names a dead-letter queue's sources", async () => {
    const work = await client.getQueue("work");
    expect(work.config).toMatchObject({ visibilityTimeoutMs: 1000, redrivePolicy, retryPolicy });
    expect(work.deadLetterSourceQueues).toEqual([]);
    const dlq = await client.getQueue("dlq");
    expect(dlq.deadLetterSourceQueues).toEqual(["work"]);
    expect(dlq.config).not.toHaveProperty("redrivePolicy");
    expect(dlq.config).not.toHaveProperty("retryPolicy");
    // Creating again with the same policies returns the queue.
    expect(await client.createQueue("work", { visibilityTimeoutMs: 1000, redrivePolicy, retryPolicy })).toEqual(work);
    expect((await client.listQueues()).queues.map((q) => [q.name, q.deadLetterSourceQueues])).toEqual([
      ["dlq", ["work"]],
      ["work", []],
    ]);

    await expectRpcError(
      client.createQueue("orphan", { redrivePolicy: { deadLetterQueue: "nowhere", maxReceiveCount: 1 } }),
      status.FAILED_PRECONDITION,
      "DEAD_LETTER_QUEUE_NOT_FOUND",
      "config.redrive_policy.dead_letter_queue",
    );
    await expectRpcError(client.deleteQueue("dlq"), status.FAILED_PRECONDITION, "QUEUE_IN_USE");

    // An update replaces the whole configuration: leaving the policies out clears them.
    const cleared = await client.updateQueue("work", { visibilityTimeoutMs: 1000 });
    expect(cleared.config).not.toHaveProperty("redrivePolicy");
    expect(cleared.config).not.toHaveProperty("retryPolicy");
    expect((await client.getQueue("dlq")).deadLetterSourceQueues).toEqual([]);
    await client.deleteQueue("dlq");
  });

  it("dead-letters a message whose lease expires after max_receive_count deliveries, and redrives it back", async () => {
    const id = await client.send("work", "poison", { attributes: { kind: "bad" } });
    const [first] = await client.receive("work");
    expect(first).toMatchObject({ messageId: id, receiveCount: 1 });
    expect(first).not.toHaveProperty("deadLetter");

    clock.advance(1000);
    await untilVisible("dlq", 1);
    expect((await client.getQueue("work")).stats).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    const [dead] = await client.receive("dlq");
    expect(dead).toMatchObject({
      messageId: id,
      // Kept across the move, counting on as AWS's ApproximateReceiveCount does.
      receiveCount: 2,
      firstReceiveTime: first!.firstReceiveTime,
      attributes: { kind: "bad" },
      deadLetter: { sourceQueue: "work", reason: "MAX_RECEIVE_COUNT_EXCEEDED" },
    });
    expect(text(dead!.body)).toBe("poison");

    // A redrive moves only visible messages: release the lease first.
    expect(await client.redriveMessages("dlq")).toBe(0);
    await client.changeVisibility("dlq", dead!.receiptHandle, 0);
    expect(await client.redriveMessages("dlq")).toBe(1);
    expect((await client.getQueue("dlq")).stats).toMatchObject({ visible: 0, inFlight: 0 });
    const [again] = await client.receive("work");
    expect(again).toMatchObject({ messageId: id, receiveCount: 1, attributes: { kind: "bad" } });
    expect(again).not.toHaveProperty("deadLetter");
    expect(text(again!.body)).toBe("poison");
  });

  it("shows when a message was dead-lettered; discardMessage and moveMessage act on one message by its id", async () => {
    const [kept, dropped] = await client.sendBatch("work", [{ body: "kept" }, { body: "dropped" }]);
    await client.receive("work", { maxMessages: 2 });
    clock.advance(1000);
    const deadLetteredTime = new Date(clock.now());
    await untilVisible("dlq", 2);
    const { messages } = await client.peekMessages("dlq");
    expect(messages.map((m) => [m.messageId, m.receiveCount, m.deadLetteredTime])).toEqual([
      [kept, 1, deadLetteredTime],
      [dropped, 1, deadLetteredTime],
    ]);

    const [delivered] = await client.receive("dlq", { visibilityTimeoutMs: 0 });
    expect(delivered).toMatchObject({ messageId: kept, receiveCount: 2, deadLetteredTime });
    await client.discardMessage("dlq", dropped!);
    expect(await client.moveMessage("dlq", kept!)).toBe("work");
    expect((await client.getQueue("dlq")).stats.visible).toBe(0);
    const [back] = (await client.peekMessages("work")).messages;
    expect(back).toMatchObject({ messageId: kept, receiveCount: 0 });
    expect(back).not.toHaveProperty("deadLetteredTime");
    const missing = await expectRpcError(client.discardMessage("dlq", dropped!), status.NOT_FOUND, "MESSAGE_NOT_FOUND");
    expect(missing.message).toContain(dropped);
    await expectRpcError(
      client.moveMessage("work", kept!),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "destination_queue",
    );
  });

  it("dead-letters released messages, and redrives a bounded number to another queue", async () => {
    await client.createQueue("elsewhere");
    const ids = await client.sendBatch("work", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const leased = await client.receive("work", { maxMessages: 3 });
    // Releasing a lease ends it without a delete, as expiry does.
    await client.changeVisibilityBatch(
      "work",
      leased.map((m) => m.receiptHandle),
      0,
    );
    await untilVisible("dlq", 3);

    expect(await client.redriveMessages("dlq", { destinationQueue: "elsewhere", maxMessages: 2 })).toBe(2);
    expect((await client.getQueue("dlq")).stats.visible).toBe(1);
    const moved = await client.receive("elsewhere", { maxMessages: 10 });
    expect(moved.map((m) => [text(m.body), m.receiveCount, m.deadLetter])).toEqual([
      ["a", 1, undefined],
      ["b", 1, undefined],
    ]);
    const [left] = await client.receive("dlq");
    expect(left).toMatchObject({
      messageId: ids[2],
      deadLetter: { sourceQueue: "work", reason: "MAX_RECEIVE_COUNT_EXCEEDED" },
    });
  });

  it("a paced redrive holds the call until the clock allows the rest", async () => {
    await client.sendBatch("work", [{ body: "a" }, { body: "b" }]);
    const leased = await client.receive("work", { maxMessages: 2 });
    await client.changeVisibilityBatch(
      "work",
      leased.map((m) => m.receiptHandle),
      0,
    );
    await untilVisible("dlq", 2);

    let done = false;
    const redrive = client.redriveMessages("dlq", { maxPerSecond: 1 }).finally(() => (done = true));
    await untilVisible("dlq", 1);
    await sleep(20);
    expect(done).toBe(false);
    for (let turn = 0; turn < 50 && !done; turn++) {
      clock.advance(1000);
      await sleep(20);
    }
    expect(await redrive).toBe(2);
    expect((await client.getQueue("work")).stats.visible).toBe(2);
  });

  it("starts, lists and cancels a message move task", async () => {
    await client.sendBatch("dlq", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const startTime = new Date(clock.now());
    const taskHandle = await client.startMessageMoveTask("dlq", { destinationQueue: "work", maxPerSecond: 1 });
    await untilVisible("work", 1);
    expect(await client.listMessageMoveTasks("dlq")).toEqual([
      {
        taskHandle,
        status: "RUNNING",
        sourceQueue: "dlq",
        destinationQueue: "work",
        maxPerSecond: 1,
        movedCount: 1,
        toMoveCount: 3,
        failureReason: "",
        startTime,
      },
    ]);
    expect(await client.cancelMessageMoveTask(taskHandle)).toBe(1);
    const [cancelled] = await client.listMessageMoveTasks("dlq", 10);
    expect(cancelled).toMatchObject({ status: "CANCELLED", movedCount: 1 });
    expect(cancelled).not.toHaveProperty("taskHandle");
    await expectRpcError(client.cancelMessageMoveTask(taskHandle), status.NOT_FOUND, "MOVE_TASK_NOT_FOUND");
  });

  it("fails as RpcError for an unknown dead-letter or destination queue", async () => {
    await expectRpcError(client.redriveMessages("nowhere"), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    await expectRpcError(
      client.redriveMessages("dlq", { destinationQueue: "nowhere" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await expectRpcError(
      client.redriveMessages("dlq", { destinationQueue: "dlq" }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
    );
    await expectRpcError(
      client.redriveMessages("dlq", { maxMessages: -1 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "max_messages",
    );
  });
});
