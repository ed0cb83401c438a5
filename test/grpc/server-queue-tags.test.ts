// Queue tags (QueueConfig.tags) and Queue.update_time over gRPC: set by
// CreateQueue, replaced by UpdateQueue, refused with their field violations,
// and update_time moving only on UpdateQueue (a fake clock makes it exact).
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Queue } from "../../gen/holdshelf/v1/queue_pb.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

/** A queue's create and update times in epoch milliseconds. */
function times(queue: Queue | undefined): { create: number; update: number } {
  return { create: timestampMs(queue!.createTime!), update: timestampMs(queue!.updateTime!) };
}

describe("queue tags and update_time over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("creates a queue with tags, shows them everywhere, and replaces them with the config on UpdateQueue", async () => {
    const tags = { team: "payments", env: "", ключ: "値" };
    const created = (await h.rpc.createQueue({ name: "tagged", config: { tags } })).queue!;
    expect(created.config!.tags).toEqual(tags);
    // The same tags again are the same configuration; others are not.
    await h.rpc.createQueue({ name: "tagged", config: { tags: { ключ: "値", env: "", team: "payments" } } });
    await expectRpcError(h.rpc.createQueue({ name: "tagged" }), status.ALREADY_EXISTS, "QUEUE_ALREADY_EXISTS");
    expect((await h.rpc.getQueue({ name: "tagged" })).queue!.config!.tags).toEqual(tags);
    expect((await h.rpc.listQueues({})).queues[0]!.config!.tags).toEqual(tags);

    const updated = (await h.rpc.updateQueue({ name: "tagged", config: { tags: { team: "billing" } } })).queue!;
    expect(updated.config!.tags).toEqual({ team: "billing" });
    const untagged = (await h.rpc.updateQueue({ name: "tagged", config: { delay: durationFromMs(1000) } })).queue!;
    expect(untagged.config!.tags).toEqual({});
    await h.restart();
    expect((await h.rpc.getQueue({ name: "tagged" })).queue!.config!.tags).toEqual({});
  });

  it("refuses bad tags with INVALID_ARGUMENT naming config.tags or the tag", async () => {
    const invalid = status.INVALID_ARGUMENT;
    const fiftyOne = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, "v"]));
    await expectRpcError(
      h.rpc.createQueue({ name: "q", config: { tags: fiftyOne } }),
      invalid,
      "INVALID_ARGUMENT",
      "config.tags",
    );
    await expectRpcError(
      h.rpc.createQueue({ name: "q", config: { tags: { "": "v" } } }),
      invalid,
      "INVALID_ARGUMENT",
      'config.tags[""]',
    );
    const longKey = "k".repeat(129);
    await expectRpcError(
      h.rpc.createQueue({ name: "q", config: { tags: { [longKey]: "v" } } }),
      invalid,
      "INVALID_ARGUMENT",
      `config.tags["${longKey}"]`,
    );
    await h.rpc.createQueue({ name: "q" });
    await expectRpcError(
      h.rpc.updateQueue({ name: "q", config: { tags: { k: "v".repeat(257) } } }),
      invalid,
      "INVALID_ARGUMENT",
      'config.tags["k"]',
    );
    expect((await h.rpc.getQueue({ name: "q" })).queue!.config!.tags).toEqual({});
  });

  it("moves update_time on UpdateQueue only, and keeps create_time", async () => {
    const created = times((await h.rpc.createQueue({ name: "q" })).queue);
    expect(created.update).toBe(created.create);
    clock.advance(2000);
    await h.rpc.createQueue({ name: "q" });
    await h.rpc.send({ queue: "q", body: Buffer.from("m") });
    await h.rpc.receive({ queue: "q" });
    await h.rpc.purgeQueue({ name: "q" });
    expect(times((await h.rpc.getQueue({ name: "q" })).queue)).toEqual(created);
    clock.advance(3000);
    const updated = times((await h.rpc.updateQueue({ name: "q", config: { maxInFlight: 5 } })).queue);
    expect(updated).toEqual({ create: created.create, update: created.create + 5000 });
    expect(times((await h.rpc.listQueues({})).queues[0])).toEqual(updated);
  });
});
