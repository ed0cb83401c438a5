// A Subscribe stream across a hand-over: when its queue's shard goes to
// another broker, the stream ends with QUEUE_MOVING (UNAVAILABLE), and the
// consumer's receipt handles still work on a new stream, which holds the
// renewed leases against its credit and acks them.
import { status } from "@grpc/grpc-js";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SubscribeResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("a Subscribe stream when its queue moves to another broker", () => {
  let url: string;
  const servers: HoldshelfServer[] = [];
  const clients: (QueueServiceRpc & { close(): void })[] = [];
  const streams: SubscribeStream[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
  });

  async function startBroker(nodeId: string): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId);
    servers.push(server);
    return server;
  }

  function subscribe(server: HoldshelfServer): SubscribeStream {
    const stream = openSubscribeStream(server.address);
    streams.push(stream);
    return stream;
  }

  it("ends with QUEUE_MOVING, and the handles it delivered renew and ack on a new stream", async () => {
    const first = await startBroker("first");
    const rpc = createQueueServiceRpc(first.address);
    clients.push(rpc);
    const name = queueOn("second", ["first", "second"], "jobs");
    await rpc.createQueue({ name, config: { visibilityTimeout: durationFromMs(60_000) } });
    for (let i = 0; i < 10; i++) await rpc.send({ queue: name, body: Buffer.from(`m${i}`) });
    const before = subscribe(first);
    before.send({ queue: name, flowControl: { maxOutstandingMessages: 3 } });
    const held = await before.deliveries(3);

    await startBroker("second");
    // The queue's shard goes to the second broker, which ends the first's stream.
    expect(await before.closed).toMatchObject({ code: status.UNAVAILABLE, reason: "QUEUE_MOVING" });

    // As a client does: a new stream, again while the shard is still moving (QUEUE_MOVING), until it is
    // served; the first broker then passes it to the second.
    let after: SubscribeStream;
    let renewed: SubscribeResponse;
    for (;;) {
      after = subscribe(first);
      after.send({
        queue: name,
        flowControl: { maxOutstandingMessages: 3 },
        leases: held.map((message) => ({ receiptHandle: message.receiptHandle })),
      });
      const outcome = await Promise.race([after.next(), after.closed]);
      if (outcome instanceof RpcError) {
        expect(outcome.reason).toBe("QUEUE_MOVING");
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      renewed = outcome!;
      break;
    }
    expect(renewed.leases.map((lease) => [lease.held, lease.reason])).toEqual([
      [true, ""],
      [true, ""],
      [true, ""],
    ]);
    // The renewed leases fill the new stream's credit: nothing else comes until they are acked.
    expect(renewed.messages).toEqual([]);
    const { queue } = await rpc.getQueue({ name });
    expect(queue!.stats).toMatchObject({ visible: 7n, inFlight: 3n });
    after.send({ ackReceiptHandles: held.map((message) => message.receiptHandle) });
    let acks = (await after.next()).acks;
    while (acks.length === 0) acks = (await after.next()).acks;
    expect(acks.map((ack) => ack.reason)).toEqual(["", "", ""]);
    await vi.waitFor(async () => expect((await rpc.getQueue({ name })).queue!.stats!.visible).toBe(4n), {
      timeout: 10_000,
      interval: 50,
    });
  });
});
