// UpdateQueue's update_mask over gRPC, on every store (and, in the cluster
// run, forwarded to the queue's owner): only the named fields change, "*"
// alone and no mask replace everything, paths of one tag (tags.<key>, the
// key bare or in backticks) set or remove that tag alone, bad masks are
// INVALID_ARGUMENT on update_mask, tag limits apply to the merged tags, and
// two operators changing different fields at once (one
// through the forwarding broker, one at the owner) never undo each other.
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const redrivePolicy = { deadLetterQueue: "dlq", maxReceiveCount: 3 };

describe("UpdateQueue's update_mask", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
    await h.rpc.createQueue({ name: "dlq" });
    await h.rpc.createQueue({ name: "work", config: { redrivePolicy, tags: { team: "a" }, maxInFlight: 10 } });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("changes visibility_timeout alone and keeps the redrive policy, tags and the rest", async () => {
    const { queue } = await h.rpc.updateQueue({
      name: "work",
      config: { visibilityTimeout: durationFromMs(60_000), delay: durationFromMs(5000) },
      updateMask: { paths: ["visibility_timeout"] },
    });
    const check = (config: QueueConfig | undefined): void => {
      expect(durationMs(config!.visibilityTimeout!)).toBe(60_000);
      expect(durationMs(config!.delay!)).toBe(0);
      expect(config!.redrivePolicy).toMatchObject(redrivePolicy);
      expect(config!.tags).toEqual({ team: "a" });
      expect(config!.maxInFlight).toBe(10);
    };
    check(queue!.config);
    await h.restart();
    check((await h.rpc.getQueue({ name: "work" })).queue!.config);
    expect((await h.rpc.getQueue({ name: "dlq" })).queue!.deadLetterSourceQueues).toEqual(["work"]);
  });

  it('replaces the whole configuration with no mask, an empty one, or "*" alone', async () => {
    for (const updateMask of [undefined, { paths: [] }, { paths: ["*"] }]) {
      await h.rpc.updateQueue({ name: "work", config: { redrivePolicy, maxInFlight: 10 } });
      const { queue } = await h.rpc.updateQueue({
        name: "work",
        config: { visibilityTimeout: durationFromMs(60_000) },
        ...(updateMask === undefined ? {} : { updateMask }),
      });
      expect(queue!.config!.redrivePolicy).toBeUndefined();
      expect(queue!.config!.maxInFlight).toBe(120_000);
    }
  });

  it("reads only the named fields: a bad value in a field left out is not checked", async () => {
    const { queue } = await h.rpc.updateQueue({
      name: "work",
      config: { delay: { seconds: -5n, nanos: 0 }, maxInFlight: 20 },
      updateMask: { paths: ["max_in_flight"] },
    });
    expect(queue!.config!.maxInFlight).toBe(20);
    await expectRpcError(
      h.rpc.updateQueue({
        name: "work",
        config: { delay: { seconds: -5n, nanos: 0 } },
        updateMask: { paths: ["delay"] },
      }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.delay",
    );
  });

  it('refuses an unknown, repeated or nested path and "*" beside others, on update_mask', async () => {
    const bad = [["visibilityTimeout"], ["delay", "delay"], ["*", "delay"], ["redrive_policy.max_receive_count"], [""]];
    for (const paths of bad) {
      await expectRpcError(
        h.rpc.updateQueue({ name: "work", config: {}, updateMask: { paths } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "update_mask",
      );
    }
    expect((await h.rpc.getQueue({ name: "work" })).queue!.config!.redrivePolicy).toMatchObject(redrivePolicy);
  });

  it("sets or removes single tags by tags.<key>, keys bare or in backticks, and keeps the rest", async () => {
    const { queue } = await h.rpc.updateQueue({
      name: "work",
      config: { tags: { env: "prod", "team-a": "x", "a`b": "y", unnamed: "z" }, maxInFlight: 99 },
      updateMask: { paths: ["tags.env", "tags.`team-a`", "tags.`a``b`", "tags.team"] },
    });
    const expected = { env: "prod", "team-a": "x", "a`b": "y" };
    expect(queue!.config!.tags).toEqual(expected);
    expect(queue!.config!.maxInFlight).toBe(10);
    await h.restart();
    expect((await h.rpc.getQueue({ name: "work" })).queue!.config!.tags).toEqual(expected);
  });

  it("refuses malformed, overlapping and repeated tag paths on update_mask, and tags past the limits on config.tags", async () => {
    const bad = [
      ["tags.team-a"],
      ["tags.`a"],
      ["tags.`a`b`"],
      ["tags."],
      ["retry_policy.`x`"],
      ["tags", "tags.team"],
      ["tags.team", "tags.`team`"],
    ];
    for (const paths of bad) {
      await expectRpcError(
        h.rpc.updateQueue({ name: "work", config: { tags: { team: "b" } }, updateMask: { paths } }),
        status.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "update_mask",
      );
    }
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    await expectRpcError(
      h.rpc.updateQueue({
        name: "work",
        config: { tags: fifty },
        updateMask: { paths: Object.keys(fifty).map((key) => `tags.${key}`) },
      }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.tags",
    );
    await expectRpcError(
      h.rpc.updateQueue({
        name: "work",
        config: { tags: { ["k".repeat(129)]: "v" } },
        updateMask: { paths: [`tags.${"k".repeat(129)}`] },
      }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      `config.tags["${"k".repeat(129)}"]`,
    );
    expect((await h.rpc.getQueue({ name: "work" })).queue!.config!.tags).toEqual({ team: "a" });
  });

  it("refuses a change of kind through fifo, and a named policy whose dead-letter queue is missing", async () => {
    await expectRpcError(
      h.rpc.updateQueue({ name: "work", config: { fifo: true }, updateMask: { paths: ["fifo"] } }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "config.fifo",
    );
    await expectRpcError(
      h.rpc.updateQueue({
        name: "work",
        config: { redrivePolicy: { deadLetterQueue: "nope", maxReceiveCount: 1 } },
        updateMask: { paths: ["redrive_policy"] },
      }),
      status.FAILED_PRECONDITION,
      "DEAD_LETTER_QUEUE_NOT_FOUND",
    );
    await expectRpcError(
      h.rpc.updateQueue({ name: "nope", config: {}, updateMask: { paths: ["delay"] } }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
  });

  it("lets two operators change different fields at once, round after round, and keeps both", async () => {
    // The second operator calls the queue's owner itself; in the cluster run the first is forwarded there.
    const other = createQueueServiceRpc(h.serverOf("work").address, { followOwnerHints: false });
    try {
      const rounds = 30;
      for (let round = 1; round <= rounds; round++) {
        const visibility = h.rpc.updateQueue({
          name: "work",
          config: { visibilityTimeout: durationFromMs(round * 1000) },
          updateMask: { paths: ["visibility_timeout"] },
        });
        const tags = other.updateQueue({
          name: "work",
          config: { tags: { round: String(round) } },
          updateMask: { paths: ["tags"] },
        });
        await Promise.all([visibility, tags]);
        const config = (await h.rpc.getQueue({ name: "work" })).queue!.config!;
        expect({ visibility: durationMs(config.visibilityTimeout!), tags: config.tags }).toEqual({
          visibility: round * 1000,
          tags: { round: String(round) },
        });
        expect(config.redrivePolicy).toMatchObject(redrivePolicy);
      }
    } finally {
      other.close();
    }
  });
});
