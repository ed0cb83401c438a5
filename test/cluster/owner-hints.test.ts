// A client following owner hints: after one call on a queue through any
// broker, the queue's next calls go straight to the broker that served it,
// and a hint that went stale sends them back to the address it was given.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();
const shardCount = 8;
/** A queue the cluster {a, b} places on `owner`. */
const hintedOn = (owner: string): string => queueOn(owner, ["a", "b"], "hinted");

describe.skipIf(skipWithoutPostgres)("a client that follows owner hints", () => {
  let url: string;
  let a: HoldshelfServer;
  let b: HoldshelfServer;
  const clients: (QueueServiceRpc & { close(): void })[] = [];
  const running = new Set<HoldshelfServer>();

  async function startBroker(nodeId: string): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId);
    running.add(server);
    return server;
  }
  async function stop(server: HoldshelfServer): Promise<void> {
    running.delete(server);
    await server.shutdown();
  }
  function clientOf(server: HoldshelfServer, followOwnerHints?: boolean): QueueServiceRpc {
    const client = createQueueServiceRpc(server.address, followOwnerHints === undefined ? {} : { followOwnerHints });
    clients.push(client);
    return client;
  }

  beforeEach(async () => {
    url = await postgres().createDatabase();
    a = await startBroker("a");
    b = await startBroker("b");
    const queue = hintedOn("b");
    await vi.waitFor(() => expect(a.cluster!.route(queue)).toMatchObject({ kind: "remote", address: b.address }), {
      timeout: 10_000,
      interval: 50,
    });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all([...running].map((server) => stop(server)));
  });

  it("calls a queue's broker directly once a call through another named it", async () => {
    const queue = hintedOn("b");
    const rpc = clientOf(a);
    await rpc.createQueue({ name: queue });
    // The broker it was given goes away (its own shards move to b); the queue's calls no longer need it.
    await stop(a);
    await vi.waitFor(() => expect(b.cluster!.ownedShardCount).toBe(shardCount), { timeout: 10_000, interval: 50 });
    await rpc.send({ queue, body: Buffer.from("direct") });
    expect((await rpc.receive({ queue })).messages).toHaveLength(1);
  });

  it("keeps calling the address it was given when told not to follow hints", async () => {
    const queue = hintedOn("b");
    const rpc = clientOf(a, false);
    await rpc.createQueue({ name: queue });
    await stop(a);
    const error = await rpc.send({ queue, body: Buffer.from("lost") }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe(14);
  });

  it("goes back to the address it was given when the hinted broker is gone", async () => {
    const queue = hintedOn("b");
    const rpc = clientOf(a);
    await rpc.createQueue({ name: queue });
    await rpc.send({ queue, body: Buffer.from("kept") });
    await stop(b);
    await vi.waitFor(() => expect(a.cluster!.ownedShardCount).toBe(shardCount), { timeout: 10_000, interval: 50 });
    // The first call meets the gone broker and forgets it; the next one goes to a, which serves the queue now.
    await rpc.getQueue({ name: queue }).catch(() => undefined);
    const { queue: info } = await rpc.getQueue({ name: queue });
    expect(info!.stats!.visible).toBe(1n);
  });
});
