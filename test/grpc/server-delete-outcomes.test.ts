import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeleteOutcome } from "../../gen/holdshelf/v1/message_pb.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const vt = 1000;

describe("Delete says what happened, over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "dlq" });
    await h.rpc.createQueue({
      name: "work",
      config: {
        visibilityTimeout: durationFromMs(vt),
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
      },
    });
    await h.rpc.createQueue({ name: "plain", config: { visibilityTimeout: durationFromMs(vt) } });
  });
  afterEach(async () => {
    await h.stop();
  });

  async function sendAndReceive(queue: string): Promise<string> {
    await h.rpc.send({ queue, body: Buffer.from("m") });
    const [message] = (await h.rpc.receive({ queue })).messages;
    return message!.receiptHandle;
  }

  /** Lets the leases run out, and any dead-letter move finish. */
  async function expire(): Promise<void> {
    clock.advance(vt);
    await h.settled();
  }

  it("answers deleted, then already deleted on a repeat", async () => {
    const handle = await sendAndReceive("plain");
    expect((await h.rpc.delete({ queue: "plain", receiptHandle: handle })).outcome).toBe(DeleteOutcome.DELETED);
    expect((await h.rpc.delete({ queue: "plain", receiptHandle: handle })).outcome).toBe(DeleteOutcome.ALREADY_DELETED);
  });

  it("answers dead-lettered when the lease ran out and the message moved before the delete, and leaves it there", async () => {
    const handle = await sendAndReceive("work");
    await expire();
    expect((await h.rpc.delete({ queue: "work", receiptHandle: handle })).outcome).toBe(DeleteOutcome.DEAD_LETTERED);
    expect((await h.rpc.receive({ queue: "dlq" })).messages).toHaveLength(1);
  });

  it("answers received again to an old handle once another lease deleted the message; LEASE_SUPERSEDED while it holds it", async () => {
    const old = await sendAndReceive("plain");
    await expire();
    const [again] = (await h.rpc.receive({ queue: "plain" })).messages;
    await expectRpcError(
      h.rpc.delete({ queue: "plain", receiptHandle: old }),
      status.FAILED_PRECONDITION,
      "LEASE_SUPERSEDED",
    );
    await h.rpc.delete({ queue: "plain", receiptHandle: again!.receiptHandle });
    expect((await h.rpc.delete({ queue: "plain", receiptHandle: old })).outcome).toBe(DeleteOutcome.RECEIVED_AGAIN);
  });

  it("answers no longer held for a purged message", async () => {
    const handle = await sendAndReceive("plain");
    await h.rpc.purgeQueue({ name: "plain" });
    expect((await h.rpc.delete({ queue: "plain", receiptHandle: handle })).outcome).toBe(DeleteOutcome.NO_LONGER_HELD);
  });

  it("says each DeleteBatch entry's outcome, with code 0, and none for a failed entry", async () => {
    const dead = await sendAndReceive("work");
    await expire();
    const deleted = await sendAndReceive("work");
    await h.rpc.delete({ queue: "work", receiptHandle: deleted });
    const fresh = await sendAndReceive("work");
    const { results } = await h.rpc.deleteBatch({ queue: "work", receiptHandles: [fresh, deleted, dead, "bogus"] });
    expect(results.map((r) => [r.code, r.reason, r.deleteOutcome])).toEqual([
      [status.OK, "", DeleteOutcome.DELETED],
      [status.OK, "", DeleteOutcome.ALREADY_DELETED],
      [status.OK, "", DeleteOutcome.DEAD_LETTERED],
      [status.INVALID_ARGUMENT, "RECEIPT_HANDLE_INVALID", DeleteOutcome.UNSPECIFIED],
    ]);
  });
});
