// Several active brokers on one PostgreSQL: they share the shards by
// rendezvous hashing over the live members, each serving its own queues;
// shards move when a broker joins or leaves, with nothing acknowledged lost,
// and ids handed out by different brokers never collide.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { shardOfQueue } from "../../src/store/postgres/shard-of-queue.js";
import { startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();
const shardCount = 8;

describe.skipIf(skipWithoutPostgres)("brokers sharing the shards", () => {
  let url: string;
  const servers: HoldshelfServer[] = [];
  const clients: (QueueServiceRpc & { close(): void })[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
  });

  async function startBroker(nodeId: string): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId, { shardCount });
    servers.push(server);
    return server;
  }

  const owned = (server: HoldshelfServer): number => server.cluster!.ownedShardCount;

  /** Waits until the running brokers serve every shard between them, each at least one. */
  async function settled(running: HoldshelfServer[]): Promise<void> {
    await vi.waitFor(
      () => {
        expect(running.map(owned).reduce((a, b) => a + b, 0)).toBe(shardCount);
        for (const server of running) expect(owned(server)).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 50 },
    );
  }

  /** The running broker that serves a queue's shard now. */
  function ownerOf(running: HoldshelfServer[], queue: string): HoldshelfServer {
    const owner = running.find((server) => server.cluster!.route(queue)?.kind === "local");
    if (owner === undefined) throw new Error(`nobody serves ${queue} (shard ${shardOfQueue(queue, shardCount)})`);
    return owner;
  }

  function clientOf(server: HoldshelfServer): QueueServiceRpc {
    const client = createQueueServiceRpc(server.address);
    clients.push(client);
    return client;
  }

  it("spreads the shards over three brokers, and each serves the queues of its own", async () => {
    const brokers = [await startBroker("a"), await startBroker("b"), await startBroker("c")];
    await settled(brokers);
    const names = Array.from({ length: 24 }, (_, i) => `q${i}`);
    const queueIds = new Set<string>();
    for (const name of names) {
      const rpc = clientOf(ownerOf(brokers, name));
      const { queue } = await rpc.createQueue({ name });
      queueIds.add(JSON.stringify(queue!.name));
      await rpc.send({ queue: name, body: Buffer.from(name) });
    }
    // Every broker served some of them.
    const servedBy = new Set(names.map((name) => ownerOf(brokers, name)));
    expect(servedBy.size).toBe(3);
    for (const name of names) {
      const { messages } = await clientOf(ownerOf(brokers, name)).receive({ queue: name, maxMessages: 10 });
      expect(messages.map((message) => Buffer.from(message.body).toString())).toEqual([name]);
    }
  });

  it("moves a leaving broker's shards to the others with its messages and receipt handles", async () => {
    const brokers = [await startBroker("a"), await startBroker("b"), await startBroker("c")];
    await settled(brokers);
    const names = Array.from({ length: 24 }, (_, i) => `q${i}`);
    const handles = new Map<string, string>();
    for (const name of names) {
      const rpc = clientOf(ownerOf(brokers, name));
      await rpc.createQueue({ name });
      await rpc.sendBatch({ queue: name, entries: [{ body: Buffer.from("1") }, { body: Buffer.from("2") }] });
      const { messages } = await rpc.receive({ queue: name, maxMessages: 1 });
      handles.set(name, messages[0]!.receiptHandle);
    }
    const leaving = brokers[1]!;
    const moved = names.filter((name) => ownerOf(brokers, name) === leaving);
    expect(moved.length).toBeGreaterThan(0);
    await leaving.shutdown();
    const rest = [brokers[0]!, brokers[2]!];
    await settled(rest);
    for (const name of names) {
      const rpc = clientOf(ownerOf(rest, name));
      const { queue } = await rpc.getQueue({ name });
      expect(queue!.stats).toMatchObject({ visible: 1n, inFlight: 1n });
      await rpc.delete({ queue: name, receiptHandle: handles.get(name)! });
    }
  });

  it("hands shards to a broker that joins, and queue ids from different brokers never collide", async () => {
    const first = await startBroker("a");
    await settled([first]);
    const rpc = clientOf(first);
    for (let i = 0; i < 8; i++) await rpc.createQueue({ name: `early${i}` });
    const second = await startBroker("b");
    await settled([first, second]);
    const both = [first, second];
    for (let i = 0; i < 8; i++) {
      const name = `late${i}`;
      await clientOf(ownerOf(both, name)).createQueue({ name });
    }
    // Purges hand out data ids too: each on its owner.
    for (let i = 0; i < 8; i++) await clientOf(ownerOf(both, `early${i}`)).purgeQueue({ name: `early${i}` });
    const pg = await import("pg");
    const admin = new pg.default.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ data_id: string }>("SELECT data_id FROM holdshelf_queues");
      expect(rows).toHaveLength(16);
      expect(new Set(rows.map((row) => row.data_id)).size).toBe(16);
    } finally {
      await admin.end();
    }
  });
});
