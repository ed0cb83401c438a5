// Dead-letter moves and redrives between queues that different brokers
// serve: the source's broker writes the message into the destination's
// inbox in the same fenced commit that removes it, and the destination's
// broker takes it in when PostgreSQL notifies it. Redrive policies may name
// another broker's queue, and a dead-letter queue knows its sources on
// every broker.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

/** A queue name that the two-broker cluster {a, b} places on `owner`'s shards. */
const nameOn = (owner: "a" | "b", prefix: string): string => queueOn(owner, ["a", "b"], prefix);

describe.skipIf(skipWithoutPostgres)("moves between queues of different brokers", () => {
  let url: string;
  let a: HoldshelfServer;
  let b: HoldshelfServer;
  let onA: QueueServiceRpc & { close(): void };
  let onB: QueueServiceRpc & { close(): void };
  const work = nameOn("a", "work");
  const dlq = nameOn("b", "dlq");

  const startBroker = (nodeId: string): Promise<HoldshelfServer> => startClusterBroker(url, nodeId);

  beforeEach(async () => {
    url = await postgres().createDatabase();
    a = await startBroker("a");
    b = await startBroker("b");
    const owned = (server: HoldshelfServer): number => server.cluster!.ownedShardCount;
    await vi.waitFor(() => expect([owned(a), owned(b)]).toEqual([4, 4]), { timeout: 10_000, interval: 50 });
    onA = createQueueServiceRpc(a.address);
    onB = createQueueServiceRpc(b.address);
    await onB.createQueue({ name: dlq });
    // The policy names a queue that only the other broker serves.
    await onA.createQueue({ name: work, config: { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } } });
  });
  afterEach(async () => {
    onA.close();
    onB.close();
    await Promise.all([a.shutdown(), b.shutdown()]);
  });

  /** Delivers a message of `work` once and releases it: its last delivery, so it moves to the dead-letter queue. */
  async function spend(body: string): Promise<string> {
    const { messageId } = await onA.send({ queue: work, body: Buffer.from(body) });
    const [message] = (await onA.receive({ queue: work })).messages;
    await onA.changeVisibility({
      queue: work,
      receiptHandle: message!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    return messageId;
  }

  it("moves a spent message into another broker's dead-letter queue, marked with its source", async () => {
    const messageId = await spend("poison");
    const [dead] = (await onB.receive({ queue: dlq, waitTime: durationFromMs(5000) })).messages;
    expect(dead).toMatchObject({
      messageId,
      deadLetterSourceQueue: work,
      deadLetterReason: "MAX_RECEIVE_COUNT_EXCEEDED",
    });
    expect(Buffer.from(dead!.body).toString()).toBe("poison");
    expect((await onA.getQueue({ name: work })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n, delayed: 0n });
  });

  it("keeps the receive count and first receive across the move to another broker, which counts on", async () => {
    const messageId = await spend("counted");
    // The move lands in b's inbox first, and shows once b takes it in.
    const peeked = await vi.waitFor(
      async () => {
        const [first] = (await onB.peekMessages({ queue: dlq })).messages;
        expect(first).toBeDefined();
        return first;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(peeked).toMatchObject({ messageId, receiveCount: 1, deadLetterSourceQueue: work });
    expect(peeked!.deadLetteredTime).toBeDefined();
    const [dead] = (await onB.receive({ queue: dlq, waitTime: durationFromMs(5000) })).messages;
    expect(dead!.receiveCount).toBe(2);
    expect(dead!.firstReceiveTime).toEqual(peeked!.firstReceiveTime);
  });

  it("MoveMessage, called on either broker, moves one dead letter back to its source on the other broker", async () => {
    const messageId = await spend("one of them");
    await spend("stays");
    await vi.waitFor(async () => expect((await onB.peekMessages({ queue: dlq })).messages).toHaveLength(2), {
      timeout: 5000,
      interval: 50,
    });
    // Called on a: passed to b, which owns the dead-letter queue and writes into a's inbox, once a's map names b.
    await vi.waitFor(() => expect(a.cluster!.route(dlq)).toMatchObject({ kind: "remote", address: b.address }), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await onA.moveMessage({ queue: dlq, messageId })).destinationQueue).toBe(work);
    const [back] = (await onA.receive({ queue: work, waitTime: durationFromMs(5000) })).messages;
    expect(back).toMatchObject({ messageId, receiveCount: 1, deadLetterSourceQueue: "" });
    expect((await onB.peekMessages({ queue: dlq })).messages.map((m) => Buffer.from(m.body).toString())).toEqual([
      "stays",
    ]);
    await onB.discardMessage({
      queue: dlq,
      messageId: (await onB.peekMessages({ queue: dlq })).messages[0]!.messageId,
    });
    expect((await onA.peekMessages({ queue: dlq })).messages).toEqual([]);
  });

  it("redrives a dead letter back to its source on the other broker", async () => {
    const messageId = await spend("retry me");
    const [dead] = (await onB.receive({ queue: dlq, waitTime: durationFromMs(5000) })).messages;
    await onB.changeVisibility({
      queue: dlq,
      receiptHandle: dead!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    expect((await onB.redriveMessages({ deadLetterQueue: dlq })).movedCount).toBe(1n);
    const [back] = (await onA.receive({ queue: work, waitTime: durationFromMs(5000) })).messages;
    expect(back).toMatchObject({ messageId, receiveCount: 1, deadLetterSourceQueue: "" });
    expect((await onB.getQueue({ name: dlq })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });

  it("redrives to a named destination that the other broker serves", async () => {
    await spend("elsewhere");
    const [dead] = (await onB.receive({ queue: dlq, waitTime: durationFromMs(5000) })).messages;
    await onB.changeVisibility({
      queue: dlq,
      receiptHandle: dead!.receiptHandle,
      visibilityTimeout: durationFromMs(0),
    });
    const other = nameOn("a", "other");
    await onA.createQueue({ name: other });
    expect((await onB.redriveMessages({ deadLetterQueue: dlq, destinationQueue: other })).movedCount).toBe(1n);
    const [moved] = (await onA.receive({ queue: other, waitTime: durationFromMs(5000) })).messages;
    expect(Buffer.from(moved!.body).toString()).toBe("elsewhere");
    await expectRpcError(
      onB.redriveMessages({ deadLetterQueue: dlq, destinationQueue: "nowhere" }),
      status.NOT_FOUND,
      "QUEUE_NOT_FOUND",
    );
  });

  it("lists a dead-letter queue's sources on every broker, and refuses to delete it while one names it", async () => {
    await vi.waitFor(
      async () => expect((await onB.getQueue({ name: dlq })).queue!.deadLetterSourceQueues).toEqual([work]),
      {
        timeout: 5000,
        interval: 50,
      },
    );
    await expectRpcError(onB.deleteQueue({ name: dlq }), status.FAILED_PRECONDITION, "QUEUE_IN_USE");
    await onA.updateQueue({ name: work });
    await onB.deleteQueue({ name: dlq });
    await expectRpcError(
      onA.updateQueue({ name: work, config: { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } } }),
      status.FAILED_PRECONDITION,
      "DEAD_LETTER_QUEUE_NOT_FOUND",
    );
  });

  it("lands every message moved while the dead-letter queue's shard changes hands exactly once", async () => {
    const spent = Promise.all(Array.from({ length: 20 }, (_, i) => spend(`m${i}`)));
    // The dead-letter queue's broker leaves while the moves go on: some land in the inbox of a shard nobody serves yet.
    await b.shutdown();
    const ids = await spent;
    await vi.waitFor(() => expect(a.cluster!.ownedShardCount).toBe(8), { timeout: 10_000, interval: 50 });
    const received: string[] = [];
    await vi.waitFor(
      async () => {
        const { messages } = await onA.receive({ queue: dlq, maxMessages: 10 });
        received.push(...messages.map((message) => message.messageId));
        expect(received.length).toBeGreaterThanOrEqual(ids.length);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(received.sort()).toEqual([...ids].sort());
    expect((await onA.getQueue({ name: dlq })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 20n });
    b = await startBroker("b");
  });
});
