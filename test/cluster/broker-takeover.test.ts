// Cluster mode over gRPC: two real brokers on one real PostgreSQL, sharing
// the shards. When one shuts down or loses its shards, the other takes them
// over. A broker whose shards were claimed answers UNAVAILABLE
// (STORAGE_UNAVAILABLE), reports NOT_SERVING, and serves its share again
// once it reclaimed it. Receipt handles are signed per cluster, so a handle
// issued by one broker works on the next.
import { status } from "@grpc/grpc-js";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { freePort } from "../support/free-port.js";
import { parseExposition, sampleValue } from "../support/prometheus-text.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("brokers taking over each other's shards", () => {
  let url: string;
  let admin: pg.Client;
  const servers: HoldshelfServer[] = [];
  const clients: (QueueServiceRpc & { close(): void })[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown().catch(() => undefined)));
    await admin.end();
  });

  async function startBroker(nodeId: string, metricsListen?: string): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId, metricsListen === undefined ? {} : { metricsListen });
    servers.push(server);
    return server;
  }

  function clientOf(server: HoldshelfServer): QueueServiceRpc {
    const client = createQueueServiceRpc(server.address);
    clients.push(client);
    return client;
  }

  const owned = (server: HoldshelfServer): number => server.cluster!.ownedShardCount;

  it("lets the other broker serve everything the first acknowledged, with its receipt handles, once it shuts down", async () => {
    const first = await startBroker("first");
    const rpc = clientOf(first);
    await rpc.createQueue({ name: "jobs" });
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push((await rpc.send({ queue: "jobs", body: Buffer.from(`m${i}`) })).messageId);
    const { messages: leased } = await rpc.receive({ queue: "jobs", maxMessages: 5 });
    expect(leased).toHaveLength(5);

    const second = await startBroker("second");
    // The two share the shards once the first handed the second its share.
    await vi.waitFor(() => expect([owned(first), owned(second)]).toEqual([4, 4]), { timeout: 10_000, interval: 50 });

    await first.shutdown();
    await vi.waitFor(() => expect(owned(second)).toBe(8), { timeout: 10_000, interval: 50 });
    const next = clientOf(second);
    // A handle the first broker issued deletes on the second.
    await next.delete({ queue: "jobs", receiptHandle: leased[0]!.receiptHandle });
    const { queue } = await next.getQueue({ name: "jobs" });
    expect(queue!.stats).toMatchObject({ visible: 15n, inFlight: 4n });
    const { messages } = await next.receive({ queue: "jobs", maxMessages: 10 });
    const rest = await next.receive({ queue: "jobs", maxMessages: 10 });
    const received = [...messages, ...rest.messages].map((message) => message.messageId);
    expect(new Set(received)).toEqual(new Set(sent.slice(5)));
  });

  it("reports each broker ready with its share of the shards on its metrics listener, and the whole once alone", async () => {
    const first = await startBroker("first");
    const metricsAddress = `127.0.0.1:${await freePort()}`;
    await startBroker("second", metricsAddress);
    const probe = async (path: string): Promise<Response> => fetch(`http://${metricsAddress}${path}`);
    const ownedByMetrics = async (): Promise<number | undefined> =>
      sampleValue(parseExposition(await (await probe("/metrics")).text()), "holdshelf_cluster_shards_owned");
    expect((await probe("/healthz")).status).toBe(200);
    expect((await probe("/readyz")).status).toBe(200);
    await vi.waitFor(async () => expect(await ownedByMetrics()).toBe(4), { timeout: 10_000, interval: 50 });

    await first.shutdown();
    await vi.waitFor(async () => expect(await ownedByMetrics()).toBe(8), { timeout: 10_000, interval: 50 });
  });

  it("makes a fenced broker answer UNAVAILABLE, then reclaim and serve only its own share", async () => {
    const first = await startBroker("first");
    // A queue whose shard goes to the second broker once both are live.
    const name = queueOn("second", ["first", "second"], "jobs");
    const rpc = clientOf(first);
    await rpc.createQueue({ name });
    await rpc.send({ queue: name, body: Buffer.from("before") });

    // The first broker's leases run out (as if it had been paused), and the second claims its share at once.
    await admin.query("UPDATE holdshelf_shards SET expires_at = now() - interval '1 second'");
    const second = await startBroker("second");
    await expectRpcError(rpc.send({ queue: name, body: Buffer.from("late") }), status.UNAVAILABLE, "STORAGE_UNAVAILABLE");
    const firstMetrics = parseExposition(await first.metrics.metrics());
    expect(sampleValue(firstMetrics, "holdshelf_cluster_ownership_losses_total")).toBe(1);

    const next = clientOf(second);
    await next.send({ queue: name, body: Buffer.from("after") });
    const { messages } = await next.receive({ queue: name, maxMessages: 10 });
    expect(messages.map((message) => Buffer.from(message.body).toString()).sort()).toEqual(["after", "before"]);

    // The first recovers: it reclaims its own share (never the second's) and serves again.
    await vi.waitFor(() => expect([first.health.isServing, owned(first), owned(second)]).toEqual([true, 4, 4]), {
      timeout: 10_000,
      interval: 50,
    });
    const { rows } = await admin.query<{ owner: string; shards: string }>(
      "SELECT owner, count(*) AS shards FROM holdshelf_shards GROUP BY owner ORDER BY owner",
    );
    expect(rows).toEqual([
      { owner: "first", shards: "4" },
      { owner: "second", shards: "4" },
    ]);
  });
});
