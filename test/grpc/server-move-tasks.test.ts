// Message move tasks over gRPC, on a real server (LevelDB, PostgreSQL, and a
// 3-broker cluster, where the source queue is one another broker serves, so
// that every call, a cancel by its handle alone included, is routed there).
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessageMoveTaskStatus } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { formatMoveTaskHandle } from "../../src/protocol/move-task-handle.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

describe("message move tasks over gRPC", () => {
  let h: GrpcHarness;
  let source: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    // A source the called broker does not serve, in the cluster run.
    source =
      ["moves-a", "moves-b", "moves-c", "moves-d", "moves-e", "moves-f"].find(
        (name) => h.serverOf(name) !== h.server,
      ) ?? "moves-a";
    await h.rpc.createQueue({ name: source });
    await h.rpc.createQueue({ name: "moves-dest" });
  });
  afterEach(async () => {
    await h.stop();
  });

  async function sendSome(count: number): Promise<void> {
    for (let i = 0; i < count; i++) await h.rpc.send({ queue: source, body: Buffer.from(`m${i}`) });
  }

  async function newest() {
    return (await h.rpc.listMessageMoveTasks({ sourceQueue: source })).tasks[0]!;
  }

  /** Waits (on I/O, not on the fake clock) until the newest task has moved `count`. */
  async function untilMoved(count: number): Promise<void> {
    for (let attempt = 0; attempt < 500 && (await newest()).movedCount < BigInt(count); attempt++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await newest()).movedCount).toBe(BigInt(count));
  }

  it("starts a task that moves everything, and lists it COMPLETED", async () => {
    await sendSome(3);
    const started = clock.now();
    const { taskHandle } = await h.rpc.startMessageMoveTask({ sourceQueue: source, destinationQueue: "moves-dest" });
    expect(taskHandle).not.toBe("");
    await h.settled();
    expect((await h.rpc.getQueue({ name: "moves-dest" })).queue!.stats!.visible).toBe(3n);
    const { tasks } = await h.rpc.listMessageMoveTasks({ sourceQueue: source, maxResults: 10 });
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      taskHandle: "",
      status: MessageMoveTaskStatus.COMPLETED,
      sourceQueue: source,
      destinationQueue: "moves-dest",
      maxPerSecond: 0,
      movedCount: 3n,
      toMoveCount: 3n,
      failureReason: "",
      startTime: { seconds: BigInt(Math.floor(started / 1000)) },
    });
  });

  it("lists a running task with its handle and progress, cancels it by the handle alone, and refuses what no longer runs", async () => {
    await sendSome(3);
    const { taskHandle } = await h.rpc.startMessageMoveTask({
      sourceQueue: source,
      destinationQueue: "moves-dest",
      maxPerSecond: 1,
    });
    await untilMoved(1);
    expect(await newest()).toMatchObject({
      taskHandle,
      status: MessageMoveTaskStatus.RUNNING,
      maxPerSecond: 1,
      toMoveCount: 3n,
    });
    await expectRpcError(
      h.rpc.startMessageMoveTask({ sourceQueue: source, destinationQueue: "moves-dest" }),
      status.FAILED_PRECONDITION,
      "MOVE_TASK_RUNNING",
    );
    expect((await h.rpc.cancelMessageMoveTask({ taskHandle })).movedCount).toBe(1n);
    expect(await newest()).toMatchObject({ taskHandle: "", status: MessageMoveTaskStatus.CANCELLED, movedCount: 1n });
    clock.advance(5000);
    await h.settled();
    expect((await h.rpc.getQueue({ name: source })).queue!.stats!.visible).toBe(2n);
    await expectRpcError(h.rpc.cancelMessageMoveTask({ taskHandle }), status.NOT_FOUND, "MOVE_TASK_NOT_FOUND");
    await expectRpcError(
      h.rpc.cancelMessageMoveTask({ taskHandle: formatMoveTaskHandle(source, "unknown") }),
      status.NOT_FOUND,
      "MOVE_TASK_NOT_FOUND",
    );
    await expectRpcError(
      h.rpc.cancelMessageMoveTask({ taskHandle: "nonsense!" }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "task_handle",
    );
  });

  it("answers bad starts and lists with their reasons and codes", async () => {
    await expectRpcError(
      h.rpc.startMessageMoveTask({ sourceQueue: "moves-none" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await expectRpcError(
      h.rpc.startMessageMoveTask({ sourceQueue: source, destinationQueue: "moves-none" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await expectRpcError(
      h.rpc.startMessageMoveTask({ sourceQueue: source, destinationQueue: source }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "destination_queue",
    );
    await expectRpcError(
      h.rpc.startMessageMoveTask({ sourceQueue: source, maxPerSecond: 501 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "max_per_second",
    );
    await expectRpcError(
      h.rpc.listMessageMoveTasks({ sourceQueue: "moves-none" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await expectRpcError(
      h.rpc.listMessageMoveTasks({ sourceQueue: source, maxResults: 11 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "max_results",
    );
    expect((await h.rpc.listMessageMoveTasks({ sourceQueue: source })).tasks).toEqual([]);
  });

  it("resumes a running task after a restart; its handle still cancels it", async () => {
    await sendSome(3);
    const { taskHandle } = await h.rpc.startMessageMoveTask({
      sourceQueue: source,
      destinationQueue: "moves-dest",
      maxPerSecond: 1,
    });
    await untilMoved(1);
    await h.restart();
    expect(await newest()).toMatchObject({ taskHandle, status: MessageMoveTaskStatus.RUNNING });
    // Resumed: the next message moves at once, the task's count continuing from the stored one (0: under a second old).
    await untilMoved(1);
    await h.rpc.cancelMessageMoveTask({ taskHandle });
    // Each resume moves its first batch at once: in the cluster run the queue may be taken up more than once as the brokers start.
    const visible = async (name: string): Promise<bigint> => (await h.rpc.getQueue({ name })).queue!.stats!.visible;
    expect(await visible("moves-dest")).toBeGreaterThanOrEqual(2n);
    expect((await visible("moves-dest")) + (await visible(source))).toBe(3n);
    expect(await newest()).toMatchObject({ status: MessageMoveTaskStatus.CANCELLED });
  });
});
