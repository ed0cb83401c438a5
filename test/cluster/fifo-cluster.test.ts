// FIFO queues in cluster mode, on a real PostgreSQL with real brokers: a
// broker that takes a FIFO queue over keeps its groups' order and blocking,
// its deduplication window and its sequence numbers; dead-letter moves to a
// FIFO queue on another broker keep the group and its order; and a redrive
// policy naming another broker's queue of the other kind is refused.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

/** A queue name that the two-broker cluster {a, b} places on `owner`'s shards, ending in ".fifo". */
const fifoNameOn = (owner: "a" | "b", prefix: string): string => `${queueOn(owner, ["a", "b"], prefix)}`;

type Rpc = QueueServiceRpc & { close(): void };

describe.skipIf(skipWithoutPostgres)("FIFO queues in cluster mode", () => {
  let url: string;
  const servers: HoldshelfServer[] = [];
  const clients: Rpc[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
  });

  async function startBroker(nodeId: string): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId);
    servers.push(server);
    return server;
  }
  function clientOf(server: HoldshelfServer): Rpc {
    const client = createQueueServiceRpc(server.address);
    clients.push(client);
    return client;
  }
  const owned = (server: HoldshelfServer): number => server.cluster!.ownedShardCount;
  const send = (rpc: Rpc, queue: string, group: string, body: string, deduplicationId: string) =>
    rpc.send({ queue, body: Buffer.from(body), messageGroupId: group, deduplicationId });
  const bodies = (messages: readonly { body: Uint8Array }[]): string[] =>
    messages.map((message) => Buffer.from(message.body).toString());

  it("keeps a FIFO queue's order, blocking, deduplication and sequence numbers when another broker takes it over", async () => {
    const first = await startBroker("a");
    const rpc = clientOf(first);
    await rpc.createQueue({ name: "orders", config: { fifo: true, visibilityTimeout: durationFromMs(1000) } });
    const sent = [];
    for (const [index, body] of ["1", "2", "3"].entries())
      sent.push(await send(rpc, "orders", "customer-7", body, `order-${index}`));
    const [leased] = (await rpc.receive({ queue: "orders" })).messages;
    expect(Buffer.from(leased!.body).toString()).toBe("1");

    const second = await startBroker("b");
    await vi.waitFor(() => expect([owned(first), owned(second)]).toEqual([4, 4]), { timeout: 10_000, interval: 50 });
    await first.shutdown();
    await vi.waitFor(() => expect(owned(second)).toBe(8), { timeout: 10_000, interval: 50 });
    const next = clientOf(second);

    // The repeat of a send the first broker stored answers with its id and number, storing nothing.
    const again = await send(next, "orders", "customer-7", "2 again", "order-1");
    expect(again).toMatchObject({ messageId: sent[1]!.messageId, sequenceNumber: sent[1]!.sequenceNumber });
    // "1" is still leased (its lease came along): its group gives nothing until the lease runs out.
    expect((await next.receive({ queue: "orders", maxMessages: 10 })).messages).toEqual([]);
    const { messages } = await next.receive({ queue: "orders", maxMessages: 10, waitTime: durationFromMs(5000) });
    expect(bodies(messages)).toEqual(["1", "2", "3"]);
    expect(messages.map((message) => message.sequenceNumber)).toEqual(sent.map((result) => result.sequenceNumber));
    // New sends on the new owner number after the old owner's.
    const later = await send(next, "orders", "customer-7", "4", "order-3");
    expect(later.sequenceNumber > sent[2]!.sequenceNumber).toBe(true);
  });

  it("moves a FIFO queue's dead letters to a FIFO queue on another broker, group and order kept", async () => {
    const a = await startBroker("a");
    const b = await startBroker("b");
    await vi.waitFor(() => expect([owned(a), owned(b)]).toEqual([4, 4]), { timeout: 10_000, interval: 50 });
    const onA = clientOf(a);
    const onB = clientOf(b);
    const work = fifoNameOn("a", "work");
    const dlq = fifoNameOn("b", "dlq");
    await onB.createQueue({ name: dlq, config: { fifo: true } });
    await onA.createQueue({
      name: work,
      config: { fifo: true, redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 1 } },
    });
    const ids = [];
    for (const body of ["1", "2", "3"]) ids.push((await send(onA, work, "g", body, `d${body}`)).messageId);
    for (let i = 0; i < 3; i++) {
      const [message] = (await onA.receive({ queue: work })).messages;
      await onA.changeVisibility({
        queue: work,
        receiptHandle: message!.receiptHandle,
        visibilityTimeout: durationFromMs(0),
      });
    }
    // All three arrive before any is received: a receive of the first would lock the group on it.
    await vi.waitFor(async () => expect((await onB.getQueue({ name: dlq })).queue!.stats!.visible).toBe(3n), {
      timeout: 10_000,
      interval: 100,
    });
    const dead = (await onB.receive({ queue: dlq, maxMessages: 10 })).messages;
    expect(bodies(dead)).toEqual(["1", "2", "3"]);
    expect(dead.map((message) => message.messageId)).toEqual(ids);
    for (const message of dead) {
      expect(message.messageGroupId).toBe("g");
      // In the dead-letter queue, the deduplication id is the message id, as in SQS.
      expect(message.deduplicationId).toBe(message.messageId);
    }
    const numbers = dead.map((message) => message.sequenceNumber);
    expect([...numbers].sort()).toEqual(numbers);
  });

  it("refuses a redrive policy naming another broker's queue of the other kind", async () => {
    const a = await startBroker("a");
    const b = await startBroker("b");
    await vi.waitFor(() => expect([owned(a), owned(b)]).toEqual([4, 4]), { timeout: 10_000, interval: 50 });
    const onA = clientOf(a);
    const onB = clientOf(b);
    const standardDlq = fifoNameOn("b", "plain-dlq");
    await onB.createQueue({ name: standardDlq });
    await expectRpcError(
      onA.createQueue({
        name: fifoNameOn("a", "work"),
        config: { fifo: true, redrivePolicy: { deadLetterQueue: standardDlq, maxReceiveCount: 1 } },
      }),
      status.INVALID_ARGUMENT,
      "INVALID_ARGUMENT",
    );
  });
});
