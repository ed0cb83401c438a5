// PeekMessages over gRPC, on a real server (LevelDB, PostgreSQL, and a
// 3-broker cluster whose called broker owns no shards, so that every peek is
// forwarded to its queue's owner): every field of a PeekedMessage, paging,
// the errors, and that a peek leaves the next delivery as it was.
import { durationFromMs, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessageState } from "../../gen/holdshelf/v1/message_pb.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { inCluster } from "../support/test-storage.js";
import { hintingRpc } from "./forwarding-harness.js";

const vt = 30_000;
const bytes = (text: string): Buffer => Buffer.from(text);
const textOf = (body: Uint8Array): string => Buffer.from(body).toString();

describe("PeekMessages over gRPC", () => {
  let h: GrpcHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startGrpcHarness({ clock });
    await h.rpc.createQueue({ name: "peek-dlq" });
    await h.rpc.createQueue({
      name: "peek-jobs",
      config: {
        visibilityTimeout: durationFromMs(vt),
        redrivePolicy: { deadLetterQueue: "peek-dlq", maxReceiveCount: 1 },
      },
    });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("shows every field: attributes, times, state, lease deadline, visible time, checkpoint size", async () => {
    const sent = clock.now();
    const { messageId: leasedId } = await h.rpc.send({
      queue: "peek-jobs",
      body: bytes("leased"),
      attributes: { kind: "order" },
      typedAttributes: {
        amount: { dataType: "Number", value: { case: "stringValue", value: "42" } },
        blob: { dataType: "Binary.gz", value: { case: "binaryValue", value: bytes("\x00\x01") } },
      },
    });
    const { messageId: visibleId } = await h.rpc.send({ queue: "peek-jobs", body: bytes("visible") });
    const { messageId: delayedId } = await h.rpc.send({
      queue: "peek-jobs",
      body: bytes("delayed"),
      delay: durationFromMs(5_000),
    });
    clock.advance(100);
    const { messages: received } = await h.rpc.receive({ queue: "peek-jobs" });
    expect(received.map((message) => message.messageId)).toEqual([leasedId]);
    const stream = openHeartbeatStream(h.server.address);
    stream.send({
      queue: "peek-jobs",
      leases: [{ receiptHandle: received[0]!.receiptHandle, checkpoint: bytes("step 3 of 7") }],
    });
    expect((await stream.next()).leases[0]!.held).toBe(true);
    stream.end();
    await stream.closed;
    const renewedAt = clock.now();

    const page = await h.rpc.peekMessages({ queue: "peek-jobs" });
    expect(page.nextPageToken).toBe("");
    const [leased, visible, delayed] = page.messages;
    expect(leased).toMatchObject({
      messageId: leasedId,
      attributes: { kind: "order" },
      typedAttributes: {
        amount: { dataType: "Number", value: { case: "stringValue", value: "42" } },
        blob: { dataType: "Binary.gz", value: { case: "binaryValue" } },
      },
      receiveCount: 1,
      sendTime: timestampFromMs(sent),
      firstReceiveTime: timestampFromMs(sent + 100),
      state: MessageState.IN_FLIGHT,
      leaseDeadline: timestampFromMs(renewedAt + vt),
      checkpointSize: "step 3 of 7".length,
      deadLetterSourceQueue: "",
      deadLetterReason: "",
    });
    expect(textOf(leased!.body)).toBe("leased");
    expect([...(leased!.typedAttributes["blob"]!.value.value as Uint8Array)]).toEqual([0, 1]);
    expect(leased!.visibleTime).toBeUndefined();
    expect(visible).toMatchObject({
      messageId: visibleId,
      receiveCount: 0,
      state: MessageState.VISIBLE,
      checkpointSize: 0,
    });
    expect(visible!.firstReceiveTime).toBeUndefined();
    expect(visible!.leaseDeadline).toBeUndefined();
    expect(visible!.visibleTime).toBeUndefined();
    expect(delayed).toMatchObject({
      messageId: delayedId,
      state: MessageState.DELAYED,
      visibleTime: timestampFromMs(sent + 5_000),
    });
    expect(delayed!.leaseDeadline).toBeUndefined();
  });

  it("shows a dead-lettered message's source queue and reason", async () => {
    const { messageId } = await h.rpc.send({ queue: "peek-jobs", body: bytes("poison") });
    await h.rpc.receive({ queue: "peek-jobs" });
    clock.advance(vt);
    await h.settled();
    let messages = (await h.rpc.peekMessages({ queue: "peek-dlq" })).messages;
    // The move is background work on the owner: wait for it on I/O, not on the clock.
    for (let turn = 0; turn < 500 && messages.length === 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      messages = (await h.rpc.peekMessages({ queue: "peek-dlq" })).messages;
    }
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      messageId,
      receiveCount: 1,
      state: MessageState.VISIBLE,
      deadLetterSourceQueue: "peek-jobs",
      deadLetterReason: "MAX_RECEIVE_COUNT_EXCEEDED",
    });
  });

  it("pages oldest first with tokens any broker resumes, and leaves the next Receive as it was", async () => {
    const { messageIds } = await h.rpc.sendBatch({
      queue: "peek-jobs",
      entries: ["a", "b", "c", "d", "e"].map((name) => ({ body: bytes(name) })),
    });
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await h.rpc.peekMessages({ queue: "peek-jobs", pageSize: 2, pageToken });
      expect(page.messages.length).toBeLessThanOrEqual(2);
      seen.push(...page.messages.map((message) => message.messageId));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual(messageIds);
    const { messages } = await h.rpc.receive({ queue: "peek-jobs", maxMessages: 10 });
    expect(messages.map((message) => [message.messageId, message.receiveCount])).toEqual(
      messageIds.map((id) => [id, 1]),
    );
    expect((await h.rpc.getQueue({ name: "peek-jobs" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 5n });
  });

  it("refuses an unknown queue, a page_size out of bounds and a page_token it did not make, naming the field", async () => {
    await expectRpcError(h.rpc.peekMessages({ queue: "peek-missing" }), status.NOT_FOUND, "QUEUE_NOT_FOUND");
    await expectRpcError(
      h.rpc.peekMessages({ queue: "peek-jobs", pageSize: 101 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_size",
    );
    await expectRpcError(
      h.rpc.peekMessages({ queue: "peek-jobs", pageSize: -1 }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_size",
    );
    await expectRpcError(
      h.rpc.peekMessages({ queue: "peek-jobs", pageToken: "bm90IGEgdG9rZW4" }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
      "page_token",
    );
    await expectRpcError(h.rpc.peekMessages({ queue: "bad name!" }), status.INVALID_ARGUMENT, "INVALID_ARGUMENT");
  });

  it.runIf(inCluster)("is served by the queue's owner when called on a broker that owns no shards", async () => {
    expect(h.serverOf("peek-jobs")).not.toBe(h.server);
    const { messageId } = await h.rpc.send({ queue: "peek-jobs", body: bytes("there") });
    const viaEntry = hintingRpc(h.server.address);
    try {
      const { messages } = await viaEntry.rpc.peekMessages({ queue: "peek-jobs" });
      expect(messages.map((message) => message.messageId)).toEqual([messageId]);
      expect(viaEntry.lastHint()).toBe(h.serverOf("peek-jobs").address);
    } finally {
      viaEntry.rpc.close();
    }
  });
});
