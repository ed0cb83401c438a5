import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { MessageMoveTaskSchema, MessageMoveTaskStatus } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { moveTaskView } from "../../src/console/console-views.js";

const start = 1_700_000_000_000;

function running(moved: number, maxPerSecond: number) {
  return create(MessageMoveTaskSchema, {
    taskHandle: "h",
    status: MessageMoveTaskStatus.RUNNING,
    sourceQueue: "dlq",
    maxPerSecond,
    movedCount: BigInt(moved),
    startTime: timestampFromMs(start),
  });
}

describe("moveTaskView's rate", () => {
  it("never reads above a paced task's limit, though each batch moves at the start of its second", () => {
    // Paced at 1/s the task moves one at 0 s and one at 1 s: 1.1 s in it has moved 2 (1.8/s over the time passed).
    expect(moveTaskView(running(2, 1), start + 1100).ratePerSecond).toBeLessThanOrEqual(1);
    // Batches of 10 at 10/s: 30 moved 2.05 s in.
    expect(moveTaskView(running(30, 10), start + 2050).ratePerSecond).toBeLessThanOrEqual(10);
    // Long after, the average is what moved over the time passed.
    expect(moveTaskView(running(100, 1), start + 200_000).ratePerSecond).toBeCloseTo(0.5);
  });

  it("averages an unpaced task over the time passed, a second at least", () => {
    expect(moveTaskView(running(500, 0), start + 100).ratePerSecond).toBe(500);
    expect(moveTaskView(running(500, 0), start + 5000).ratePerSecond).toBe(100);
  });
});
