// Cluster mode over gRPC: two real brokers on one real PostgreSQL. One
// serves; the other stands by and takes over when the first shuts down or
// loses its shards. A broker whose shards were claimed answers UNAVAILABLE
// (STORAGE_UNAVAILABLE), reports NOT_SERVING, and serves again once it can
// claim them back. Receipt handles are signed per cluster, so a handle
// issued by one broker works on the next.
import { status } from "@grpc/grpc-js";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { freePort } from "../support/free-port.js";
import { parseExposition, valueOf } from "../support/prometheus-text.js";
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
    const server = await startHoldshelfServer({
      dataDir: "/nonexistent-in-cluster-mode",
      listen: "127.0.0.1:0",
      postgres: { urls: [url], nodeId, shardCount: 8, leaseTtlMs: 1500 },
      ...(metricsListen === undefined ? {} : { metricsListen }),
    });
    servers.push(server);
    return server;
  }

  function clientOf(server: HoldshelfServer): QueueServiceRpc {
    const client = createQueueServiceRpc(server.address);
    clients.push(client);
    return client;
  }

  it("lets a standby serve everything the first broker acknowledged, with its receipt handles, once it shuts down", async () => {
    const first = await startBroker("first");
    const rpc = clientOf(first);
    await rpc.createQueue({ name: "jobs" });
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push((await rpc.send({ queue: "jobs", body: Buffer.from(`m${i}`) })).messageId);
    const { messages: leased } = await rpc.receive({ queue: "jobs", maxMessages: 5 });
    expect(leased).toHaveLength(5);

    let standbyStarted = false;
    const standby = startBroker("second").then((server) => ((standbyStarted = true), server));
    // It stands by: it cannot claim the shards of a live broker.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(standbyStarted).toBe(false);

    await first.shutdown();
    const second = await standby;
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

  it("shows a standby alive but not ready on its metrics listener, owning no shards, until it takes over", async () => {
    const first = await startBroker("first");
    const metricsAddress = `127.0.0.1:${await freePort()}`;
    const standby = startBroker("second", metricsAddress);
    const probe = async (path: string): Promise<Response> => fetch(`http://${metricsAddress}${path}`);
    await vi.waitFor(async () => expect((await probe("/healthz")).status).toBe(200), { timeout: 5000, interval: 50 });
    expect((await probe("/readyz")).status).toBe(503);
    const owned = async (): Promise<number | undefined> =>
      valueOf(parseExposition(await (await probe("/metrics")).text()), "holdshelf_cluster_shards_owned");
    expect(await owned()).toBe(0);

    await first.shutdown();
    await standby;
    expect((await probe("/readyz")).status).toBe(200);
    expect(await owned()).toBe(8);
  });

  it("makes a fenced broker answer UNAVAILABLE and report NOT_SERVING, then serve again once its shards are free", async () => {
    const first = await startBroker("first");
    const rpc = clientOf(first);
    await rpc.createQueue({ name: "jobs" });
    await rpc.send({ queue: "jobs", body: Buffer.from("before") });

    // The first broker's leases run out (as if it had been paused), and the second claims its shards.
    await admin.query("UPDATE holdshelf_shards SET expires_at = now() - interval '1 second'");
    const second = await startBroker("second");
    await expectRpcError(rpc.send({ queue: "jobs", body: Buffer.from("late") }), status.UNAVAILABLE, "STORAGE_UNAVAILABLE");
    expect(first.health.isServing).toBe(false);
    const firstMetrics = parseExposition(await first.metrics.metrics());
    expect(valueOf(firstMetrics, "holdshelf_cluster_shards_owned")).toBe(0);
    expect(valueOf(firstMetrics, "holdshelf_cluster_ownership_losses_total")).toBe(1);

    const next = clientOf(second);
    await next.send({ queue: "jobs", body: Buffer.from("after") });
    const { messages } = await next.receive({ queue: "jobs", maxMessages: 10 });
    expect(messages.map((message) => Buffer.from(message.body).toString()).sort()).toEqual(["after", "before"]);

    // The first stood by meanwhile; when the second leaves, it claims the shards and serves what the second wrote.
    await second.shutdown();
    await vi.waitFor(() => expect(first.health.isServing).toBe(true), { timeout: 10_000, interval: 50 });
    const { queue } = await rpc.getQueue({ name: "jobs" });
    expect(queue!.stats).toMatchObject({ visible: 0n, inFlight: 2n });
    const { rows } = await admin.query<{ owner: string }>("SELECT DISTINCT owner FROM holdshelf_shards");
    expect(rows).toEqual([{ owner: "first" }]);
  });
});
