// DiscardMessage and MoveMessage over gRPC, on a real server (LevelDB,
// PostgreSQL, and a 3-broker cluster whose called broker owns no shards, so
// that every call is forwarded to its queue's owner): what each does, every
// error with its stable reason, the audit line the owner writes, and the
// receive history a dead-letter move keeps (PeekedMessage.dead_lettered_time).
import { durationFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { DeleteOutcome } from "../../gen/holdshelf/v1/message_pb.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const vt = 30_000;
const unknownId = "019b76da-a80b-772c-b498-ce91a4eb059e";
const bytes = (text: string): Buffer => Buffer.from(text);

describe("DiscardMessage and MoveMessage over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  let lines: Record<string, unknown>[];
  const audits = (): Record<string, unknown>[] => lines.filter((line) => line["msg"] === "message action");

  beforeEach(async () => {
    lines = [];
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    h = await startGrpcHarness({ clock, logger });
    await h.rpc.createQueue({ name: "adm-dlq" });
    await h.rpc.createQueue({
      name: "adm-work",
      config: {
        visibilityTimeout: durationFromMs(vt),
        redrivePolicy: { deadLetterQueue: "adm-dlq", maxReceiveCount: 1 },
      },
    });
    await h.rpc.createQueue({ name: "adm-other" });
  });
  afterEach(async () => {
    await h.stop();
  });

  /** Sends to adm-work, receives once, and releases it 50 ms later: its last delivery, so it is dead-lettered then. */
  async function deadLetter(body: string): Promise<{ messageId: string; firstReceiveTime: number }> {
    const { messageId } = await h.rpc.send({ queue: "adm-work", body: bytes(body) });
    clock.advance(100);
    const [message] = (await h.rpc.receive({ queue: "adm-work" })).messages;
    clock.advance(50);
    await h.rpc.changeVisibility({
      queue: "adm-work",
      receiptHandle: message!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    await h.settled();
    return { messageId, firstReceiveTime: timestampMs(message!.firstReceiveTime!) };
  }

  it("keeps a dead-lettered message's receive history, and a peek shows when it was dead-lettered", async () => {
    const { messageId, firstReceiveTime } = await deadLetter("poison");
    clock.advance(1_000);
    const [peeked] = (await h.rpc.peekMessages({ queue: "adm-dlq" })).messages;
    expect(peeked).toMatchObject({ messageId, receiveCount: 1, deadLetterSourceQueue: "adm-work" });
    expect(timestampMs(peeked!.firstReceiveTime!)).toBe(firstReceiveTime);
    expect(timestampMs(peeked!.deadLetteredTime!)).toBe(firstReceiveTime + 50);
    const [received] = (await h.rpc.receive({ queue: "adm-dlq" })).messages;
    expect(received!.receiveCount).toBe(2);
    expect(timestampMs(received!.firstReceiveTime!)).toBe(firstReceiveTime);
    expect(timestampMs(received!.deadLetteredTime!)).toBe(firstReceiveTime + 50);
    // A message never dead-lettered has no dead-lettered time.
    await h.rpc.send({ queue: "adm-other", body: bytes("plain") });
    expect((await h.rpc.peekMessages({ queue: "adm-other" })).messages[0]!.deadLetteredTime).toBeUndefined();
  });

  it("DiscardMessage deletes one message by id, in flight too, and writes one audit line", async () => {
    const { messageId: keep } = await h.rpc.send({ queue: "adm-other", body: bytes("keep") });
    const { messageId: drop } = await h.rpc.send({ queue: "adm-other", body: bytes("drop") });
    const [leased] = (await h.rpc.receive({ queue: "adm-other", maxMessages: 2 })).messages.filter(
      (message) => message.messageId === drop,
    );
    await h.rpc.discardMessage({ queue: "adm-other", messageId: drop });
    expect((await h.rpc.peekMessages({ queue: "adm-other" })).messages.map((m) => m.messageId)).toEqual([keep]);
    // Its consumer's Delete then succeeds, deleting nothing: the broker remembers no departure for it.
    const late = await h.rpc.delete({ queue: "adm-other", receiptHandle: leased!.receiptHandle });
    expect(late.outcome).toBe(DeleteOutcome.NO_LONGER_HELD);
    expect(audits()).toEqual([
      expect.objectContaining({
        level: "info",
        action: "DiscardMessage",
        queue: "adm-other",
        messageId: drop,
        caller: null,
      }),
    ]);
  });

  it("MoveMessage moves a dead letter back to its source, restarting its history, and names where it went", async () => {
    const { messageId } = await deadLetter("again");
    const moved = await h.rpc.moveMessage({ queue: "adm-dlq", messageId });
    expect(moved.destinationQueue).toBe("adm-work");
    await h.settled();
    const [back] = (await h.rpc.peekMessages({ queue: "adm-work" })).messages;
    expect(back).toMatchObject({ messageId, receiveCount: 0, deadLetterSourceQueue: "", deadLetterReason: "" });
    expect(back!.firstReceiveTime).toBeUndefined();
    expect(back!.deadLetteredTime).toBeUndefined();
    expect((await h.rpc.peekMessages({ queue: "adm-dlq" })).messages).toEqual([]);
    expect(audits()).toEqual([
      expect.objectContaining({ action: "MoveMessage", queue: "adm-dlq", messageId, destinationQueue: "adm-work" }),
    ]);
  });

  it("MoveMessage moves a message to a named queue", async () => {
    const { messageId } = await h.rpc.send({ queue: "adm-other", body: bytes("elsewhere") });
    expect(
      (await h.rpc.moveMessage({ queue: "adm-other", messageId, destinationQueue: "adm-dlq" })).destinationQueue,
    ).toBe("adm-dlq");
    await h.settled();
    const [moved] = (await h.rpc.receive({ queue: "adm-dlq" })).messages;
    expect([moved!.messageId, Buffer.from(moved!.body).toString()]).toEqual([messageId, "elsewhere"]);
  });

  it("refuses with a stable reason: malformed or unknown id, missing queue, bad destinations", async () => {
    const { messageId } = await h.rpc.send({ queue: "adm-other", body: bytes("m") });
    const invalid = status.INVALID_ARGUMENT;
    await expectRpcError(
      h.rpc.discardMessage({ queue: "adm-other", messageId: "x" }),
      invalid,
      "INVALID_ARGUMENT",
      "message_id",
    );
    await expectRpcError(
      h.rpc.discardMessage({ queue: "adm-other", messageId: unknownId }),
      status.NOT_FOUND,
      "MESSAGE_NOT_FOUND",
    );
    await expectRpcError(h.rpc.discardMessage({ queue: "adm-none", messageId }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId: "x" }),
      invalid,
      "INVALID_ARGUMENT",
      "message_id",
    );
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId: unknownId, destinationQueue: "adm-dlq" }),
      status.NOT_FOUND,
      "MESSAGE_NOT_FOUND",
    );
    // Never dead-lettered: no source queue to go back to.
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId }),
      invalid,
      "INVALID_ARGUMENT",
      "destination_queue",
    );
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId, destinationQueue: "adm-other" }),
      invalid,
      "INVALID_ARGUMENT",
      "destination_queue",
    );
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId, destinationQueue: "adm-missing" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    await h.rpc.createQueue({ name: "adm-orders.fifo", config: { fifo: true, contentBasedDeduplication: true } });
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-other", messageId, destinationQueue: "adm-orders.fifo" }),
      invalid,
      "INVALID_ARGUMENT",
      "destination_queue",
    );
    // The dead-letter source deleted since: nowhere to go back to.
    const dead = await deadLetter("orphan");
    await h.rpc.deleteQueue({ name: "adm-work" });
    await expectRpcError(
      h.rpc.moveMessage({ queue: "adm-dlq", messageId: dead.messageId }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
    // Nothing moved, nothing audited.
    expect((await h.rpc.peekMessages({ queue: "adm-other" })).messages.map((m) => m.messageId)).toEqual([messageId]);
    expect(audits()).toEqual([]);
  });
});
