// Message move tasks (SQS's StartMessageMoveTask): a redrive in the
// background, stored in the source queue's record, on the fake clock.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { formatMoveTaskHandle } from "../../src/protocol/move-task-handle.js";
import { decodeQueueRecord, encodeQueueRecord } from "../../src/store/value-codecs.js";
import {
  counts,
  createQueue,
  expectFailure,
  openBrokerHarness,
  sendText,
  type BrokerHarness,
} from "./broker-harness.js";

const vt = 1000;

describe("message move tasks", () => {
  let h: BrokerHarness;
  beforeEach(async () => {
    h = await openBrokerHarness();
    await createQueue(h, "src", { visibilityTimeoutMs: vt });
    await createQueue(h, "dest");
  });
  afterEach(async () => {
    expect(h.backgroundErrors).toEqual([]);
    await h.dispose();
  });

  async function sendSome(count: number, queue = "src"): Promise<void> {
    for (let i = 0; i < count; i++) await sendText(h, queue, `m${i}`);
  }

  /** Yields to I/O until `queue` shows `count` visible messages, then lets the task arm its pacing timer. */
  async function untilVisible(queue: string, count: number): Promise<void> {
    for (let turn = 0; turn < 1000 && counts(h, queue).visible < count; turn++) await turnOfLoop();
    expect(counts(h, queue).visible).toBe(count);
    for (let turn = 0; turn < 10; turn++) await turnOfLoop();
  }

  function tasks(queue = "src", maxResults = 10) {
    return h.broker.listMessageMoveTasks(queue, maxResults);
  }

  async function storedTasks(queue = "src") {
    return (await h.store.load()).queues.find((stored) => stored.record.name === queue)!.record.moveTasks;
  }

  it("moves the messages visible at its start, and none that arrive after", async () => {
    await sendSome(3);
    await sendText(h, "src", "in flight");
    await h.broker.receive("src", { visibilityTimeoutMs: 60_000 });
    const start = h.clock.now();
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    h.clock.advance(1);
    await sendText(h, "src", "newer");
    for (let moved = 1; moved <= 3; moved++) {
      await untilVisible("dest", moved);
      h.clock.advance(1000);
    }
    await h.broker.settled();
    expect(counts(h, "dest").visible).toBe(3);
    expect(counts(h, "src")).toEqual({ visible: 1, inFlight: 1, delayed: 0 });
    expect(tasks()).toEqual([
      {
        taskHandle: undefined,
        status: "COMPLETED",
        sourceQueue: "src",
        destinationQueue: "dest",
        maxPerSecond: 1,
        movedCount: 3,
        toMoveCount: 3,
        failureReason: "",
        startTime: start,
      },
    ]);
    expect(handle).not.toBe("");
    expect(await storedTasks()).toMatchObject([{ status: "COMPLETED", movedCount: 3 }]);
  });

  it("counts its progress and keeps to max_per_second on the clock", async () => {
    await sendSome(5);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 2);
    await untilVisible("dest", 2);
    expect(tasks()).toMatchObject([{ taskHandle: handle, status: "RUNNING", movedCount: 2, toMoveCount: 5 }]);
    h.clock.advance(999);
    await untilVisible("dest", 2);
    h.clock.advance(1);
    await untilVisible("dest", 4);
    expect(tasks()).toMatchObject([{ status: "RUNNING", movedCount: 4 }]);
    // The count is stored as the task goes, at most once a second.
    expect(await storedTasks()).toMatchObject([{ status: "RUNNING", movedCount: 4 }]);
    h.clock.advance(1000);
    await untilVisible("dest", 5);
    // It paces after its last batch too, then ends.
    h.clock.advance(500);
    await h.broker.settled();
    expect(tasks()).toMatchObject([{ taskHandle: undefined, status: "COMPLETED", movedCount: 5 }]);
  });

  it("sends messages back to their dead-letter source queues without a destination", async () => {
    await createQueue(h, "work", {
      visibilityTimeoutMs: vt,
      redrivePolicy: { deadLetterQueue: "src", maxReceiveCount: 1 },
    });
    await sendSome(2, "work");
    await h.broker.receive("work", { maxMessages: 2 });
    h.clock.advance(vt);
    await h.broker.runMaintenance();
    expect(counts(h, "src").visible).toBe(2);
    await h.broker.startMessageMoveTask("src", "", 0);
    await h.broker.settled();
    expect(counts(h, "work").visible).toBe(2);
    expect(tasks()).toMatchObject([{ status: "COMPLETED", destinationQueue: "", movedCount: 2 }]);
  });

  it("runs one task at a time per source queue: another start fails with MOVE_TASK_RUNNING", async () => {
    await sendSome(3);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await expectFailure(() => h.broker.startMessageMoveTask("src", "dest", 0), "MOVE_TASK_RUNNING");
    await createQueue(h, "other");
    await h.broker.startMessageMoveTask("other", "dest", 0);
    await h.broker.cancelMessageMoveTask(handle);
    await h.broker.startMessageMoveTask("src", "dest", 0);
    await h.broker.settled();
    expect(tasks().map((task) => task.status)).toEqual(["COMPLETED", "CANCELLED"]);
  });

  it("checks its arguments as RedriveMessages does, with a rate of at most 500", async () => {
    await expectFailure(() => h.broker.startMessageMoveTask("nope", "dest", 0), "QUEUE_NOT_FOUND");
    await expectFailure(() => h.broker.startMessageMoveTask("src", "nope", 0), "QUEUE_NOT_FOUND");
    await expectFailure(() => h.broker.startMessageMoveTask("bad name", "dest", 0), "INVALID_ARGUMENT", "source_queue");
    await expectFailure(() => h.broker.startMessageMoveTask("src", "src", 0), "INVALID_ARGUMENT", "destination_queue");
    await expectFailure(() => h.broker.startMessageMoveTask("src", "dest", 501), "INVALID_ARGUMENT", "max_per_second");
    await expectFailure(() => h.broker.startMessageMoveTask("src", "dest", -1), "INVALID_ARGUMENT", "max_per_second");
    await h.broker.startMessageMoveTask("src", "dest", 500);
    await expectFailure(() => h.broker.listMessageMoveTasks("nope", 1), "QUEUE_NOT_FOUND");
    await expectFailure(() => h.broker.listMessageMoveTasks("src", 11), "INVALID_ARGUMENT", "max_results");
    await expectFailure(() => h.broker.listMessageMoveTasks("src", -1), "INVALID_ARGUMENT", "max_results");
  });

  it("stops when cancelled, keeping the moves made, and can be cancelled only while it runs", async () => {
    await sendSome(5);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    h.clock.advance(1000);
    await untilVisible("dest", 2);
    expect(await h.broker.cancelMessageMoveTask(handle)).toBe(2);
    h.clock.advance(10_000);
    await h.broker.settled();
    expect(counts(h, "dest").visible).toBe(2);
    expect(counts(h, "src").visible).toBe(3);
    expect(tasks()).toMatchObject([{ taskHandle: undefined, status: "CANCELLED", movedCount: 2 }]);
    expect(await storedTasks()).toMatchObject([{ status: "CANCELLED", movedCount: 2 }]);

    await expectFailure(() => h.broker.cancelMessageMoveTask(handle), "MOVE_TASK_NOT_FOUND");
    await expectFailure(
      () => h.broker.cancelMessageMoveTask(formatMoveTaskHandle("src", "no-such-task")),
      "MOVE_TASK_NOT_FOUND",
    );
    await expectFailure(() => h.broker.cancelMessageMoveTask(formatMoveTaskHandle("gone", "x")), "MOVE_TASK_NOT_FOUND");
    await expectFailure(() => h.broker.cancelMessageMoveTask("not a handle"), "INVALID_ARGUMENT", "task_handle");
    await expectFailure(() => h.broker.cancelMessageMoveTask(""), "INVALID_ARGUMENT", "task_handle");
    await expectFailure(() => h.broker.cancelMessageMoveTask(`${handle}x`), "INVALID_ARGUMENT", "task_handle");
  });

  it("lists tasks newest first, keeps the last 10, and shows a handle only while one runs", async () => {
    for (let task = 0; task < 12; task++) {
      await h.broker.startMessageMoveTask("src", "dest", task);
      await h.broker.settled();
      h.clock.advance(1);
    }
    await sendSome(2);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    const listed = tasks();
    expect(listed).toHaveLength(10);
    expect(listed.map((task) => task.maxPerSecond)).toEqual([1, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    expect(listed.map((task) => task.taskHandle)).toEqual([handle, ...Array<undefined>(9).fill(undefined)]);
    expect(listed.map((task) => task.startTime)).toEqual(
      [...listed.map((task) => task.startTime)].sort((a, b) => b - a),
    );
    expect(tasks("src", 0)).toEqual([listed[0]]);
    expect(tasks("src", 3)).toEqual(listed.slice(0, 3));
    expect(await storedTasks()).toHaveLength(10);
  });

  it("resumes after a restart where it stopped, moving nothing that arrived after its start", async () => {
    await sendSome(5);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    h.clock.advance(1000);
    await untilVisible("dest", 2);
    h.clock.advance(1);
    await sendText(h, "src", "newer");
    await h.restart();
    expect(tasks()).toMatchObject([{ taskHandle: handle, status: "RUNNING", movedCount: 2 }]);
    for (let moved = 3; moved <= 5; moved++) {
      await untilVisible("dest", moved);
      h.clock.advance(1000);
    }
    await h.broker.settled();
    expect(counts(h, "dest").visible).toBe(5);
    expect(counts(h, "src").visible).toBe(1);
    expect(tasks()).toMatchObject([{ status: "COMPLETED", movedCount: 5, toMoveCount: 5 }]);
    await h.restart();
    await h.broker.settled();
    expect(counts(h, "src").visible).toBe(1);
  });

  it("fails when its destination is deleted, leaving the rest in the source queue", async () => {
    await sendSome(3);
    await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    await h.broker.deleteQueue("dest");
    h.clock.advance(1000);
    await h.broker.settled();
    expect(counts(h, "src").visible).toBe(2);
    expect(tasks()).toMatchObject([
      {
        taskHandle: undefined,
        status: "FAILED",
        movedCount: 1,
        failureReason: 'destination queue "dest" does not exist',
      },
    ]);
  });

  it("ends with its source queue, which takes its tasks along", async () => {
    await sendSome(3);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    await h.broker.deleteQueue("src");
    h.clock.advance(1000);
    await h.broker.settled();
    expect(counts(h, "dest").visible).toBe(1);
    await expectFailure(() => h.broker.cancelMessageMoveTask(handle), "MOVE_TASK_NOT_FOUND");
    await createQueue(h, "src");
    expect(tasks()).toEqual([]);
  });

  it("fails a cancel that a stop overtakes, leaving the task stored as running for whoever resumes it", async () => {
    await sendSome(5);
    const handle = await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    // The cancel waits for the current batch; the queue goes to another broker meanwhile.
    const cancel = h.broker.cancelMessageMoveTask(handle);
    h.broker.evictQueues(["src"], new HoldshelfError("QUEUE_MOVING", 'queue "src" is moving between brokers; retry'));
    h.clock.advance(1000);
    await expect(cancel).rejects.toMatchObject({ reason: "QUEUE_MOVING" });
    await h.broker.settled();
    expect(await storedTasks()).toMatchObject([{ status: "RUNNING" }]);
  });

  it("starts no task once the broker closes: one whose start raced the close stays stored, and shutdown does not wait for it", async () => {
    await sendSome(5);
    const start = h.broker.startMessageMoveTask("src", "dest", 1);
    h.broker.close();
    await start;
    // A paced task over five messages would hold settled() for seconds of the clock; none runs.
    await h.broker.settled();
    expect(counts(h, "dest").visible).toBe(0);
    expect(await storedTasks()).toMatchObject([{ status: "RUNNING", movedCount: 0 }]);
  });

  it("stops when storage fails, and resumes once the broker reloads", async () => {
    await sendSome(3);
    await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    h.broker.suspend(new HoldshelfError("STORAGE_UNAVAILABLE", "the disk is gone"));
    h.clock.advance(5000);
    await h.broker.settled();
    h.broker.reload(await h.store.load());
    expect(counts(h, "dest").visible).toBe(1);
    for (let moved = 2; moved <= 3; moved++) {
      await untilVisible("dest", moved);
      h.clock.advance(1000);
    }
    await h.broker.settled();
    // The first move was made before any count was stored (under a second): the count misses it.
    expect(tasks()).toMatchObject([{ status: "COMPLETED", movedCount: 2 }]);
    expect(counts(h, "src").visible).toBe(0);
  });

  it("keeps queue updates and its progress from writing over each other", async () => {
    await sendSome(3);
    await h.broker.startMessageMoveTask("src", "dest", 1);
    await untilVisible("dest", 1);
    await h.broker.updateQueue("src", { visibilityTimeoutMs: vt, tags: { team: "a" } });
    for (let moved = 2; moved <= 3; moved++) {
      h.clock.advance(1000);
      await untilVisible("dest", moved);
    }
    h.clock.advance(1000);
    await h.broker.settled();
    await h.restart();
    expect(h.broker.getQueue("src").config.tags).toEqual({ team: "a" });
    expect(tasks()).toMatchObject([{ status: "COMPLETED", movedCount: 3 }]);
  });

  it("reads a queue record from before move tasks as having none, and writes it in that layout until one starts", async () => {
    const { record } = (await h.store.load()).queues.find((stored) => stored.record.name === "src")!;
    const json = JSON.parse(encodeQueueRecord(record).toString("utf8")) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(["name", "queueId", "dataId", "config", "createTime", "updateTime"]);
    expect(decodeQueueRecord(encodeQueueRecord(record)).moveTasks).toBeUndefined();
    await h.restart();
    expect(tasks()).toEqual([]);
    await h.broker.startMessageMoveTask("src", "dest", 0);
    await h.broker.settled();
    const after = (await h.store.load()).queues.find((stored) => stored.record.name === "src")!.record;
    expect(decodeQueueRecord(encodeQueueRecord(after)).moveTasks).toMatchObject([
      { status: "COMPLETED", destinationQueue: "dest" },
    ]);
  });
});

function turnOfLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
