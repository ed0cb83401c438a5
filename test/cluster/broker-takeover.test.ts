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
import { queueOn, startClusterBroker, type ClusterBrokerOptions } from "../support/cluster-brokers.js";
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

  async function startBroker(nodeId: string, options: ClusterBrokerOptions = {}): Promise<HoldshelfServer> {
    const server = await startClusterBroker(url, nodeId, options);
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
    await startBroker("second", { metricsListen: metricsAddress });
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
    // Leases of 30 s, renewed every 10 s: no renewal in the few seconds until the call below, which
    // would extend the first broker's lapsed leases before the second claims, or find them claimed
    // (and stop the first serving) before the call; the default 1.5 s lease is renewed every 0.5 s.
    // The second's lease alike: a member is live to it while it renewed within its own lease.
    const first = await startBroker("first", { leaseTtlMs: 30_000 });
    // A queue whose shard goes to the second broker once both are live.
    const name = queueOn("second", ["first", "second"], "jobs");
    const rpc = clientOf(first);
    await rpc.createQueue({ name });
    await rpc.send({ queue: name, body: Buffer.from("before") });

    // The first broker's leases run out (as if it had been paused), and the second claims its share at once.
    await admin.query("UPDATE holdshelf_shards SET expires_at = now() - interval '1 second'");
    // Paused it stays until the call: its balancing, which would see the second join and hand it
    // the queue's shard within 200 ms (the call then goes to the second), waits meanwhile.
    const pause = await holdBalancing("first");
    const starting = startBroker("second", { leaseTtlMs: 30_000 });
    try {
      await vi.waitFor(async () => expect(await shardsOf("second")).toBe(4), { timeout: 10_000, interval: 20 });
      await expectRpcError(
        rpc.send({ queue: name, body: Buffer.from("late") }),
        status.UNAVAILABLE,
        "STORAGE_UNAVAILABLE",
      );
    } finally {
      await pause.end();
      // The second broker's start ends its first balancing step, which waited on the pause too.
      await starting.catch(() => undefined);
    }
    const second = await starting;
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

  /** How many shards `owner` holds, as the table says (live or not). */
  async function shardsOf(owner: string): Promise<number> {
    const { rows } = await admin.query<{ shards: string }>(
      "SELECT count(*) AS shards FROM holdshelf_shards WHERE owner = $1",
      [owner],
    );
    return Number(rows[0]!.shards);
  }

  /**
   * Stops `nodeId`'s balancing at its next step, until the returned session
   * ends: it holds the inbox table, which each step reads last. Resolves once
   * that step waits for it.
   */
  async function holdBalancing(nodeId: string): Promise<pg.Client> {
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE holdshelf_inbox IN ACCESS EXCLUSIVE MODE");
      await vi.waitFor(
        async () => {
          const { rows } = await admin.query<{ waiting: string }>(
            `SELECT count(*) AS waiting FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE NOT l.granted AND l.relation = 'holdshelf_inbox'::regclass AND a.application_name = $1`,
            [`holdshelf ${nodeId}`],
          );
          expect(Number(rows[0]!.waiting)).toBeGreaterThan(0);
        },
        { timeout: 10_000, interval: 20 },
      );
    } catch (error) {
      await holder.end();
      throw error;
    }
    return holder;
  }
});
