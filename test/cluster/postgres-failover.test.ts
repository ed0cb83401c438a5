// Cluster mode across a PostgreSQL failover: a primary with a synchronous
// standby, a broker given both hosts. The primary is killed with SIGKILL and
// the standby promoted; the broker finds the new primary by itself, and every
// send it acknowledged before the kill is still there.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { startPostgres, startStandby, type PostgresServer, skipWithoutPostgres } from "../support/postgres-server.js";

describe.skipIf(skipWithoutPostgres)("a PostgreSQL failover under a serving broker", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it("carries on on the promoted synchronous standby with every acknowledged send", async () => {
    const primary = await startPostgres({ synchronousStandby: "standby1" });
    cleanups.push(() => primary.stop());
    const standby = await startStandby(primary, "standby1");
    cleanups.push(() => standby.stop());
    const hosts = (server: PostgresServer): string => server.url("postgres");

    const broker: HoldshelfServer = await startHoldshelfServer({
      dataDir: "/nonexistent-in-cluster-mode",
      listen: "127.0.0.1:0",
      postgres: { urls: [hosts(primary), hosts(standby)], nodeId: "broker", shardCount: 8 },
    });
    cleanups.push(() => broker.shutdown());
    const rpc = createQueueServiceRpc(broker.address);
    cleanups.push(async () => rpc.close());

    await rpc.createQueue({ name: "jobs" });
    const acknowledged = new Set<string>();
    for (let i = 0; i < 50; i++)
      acknowledged.add((await rpc.send({ queue: "jobs", body: Buffer.from(`m${i}`) })).messageId);

    await primary.kill();
    // Writes fail while no host takes them; the broker says so rather than answering.
    await expect(rpc.send({ queue: "jobs", body: Buffer.from("during") })).rejects.toThrow();
    await vi.waitFor(() => expect(broker.health.isServing).toBe(false), { timeout: 5000, interval: 50 });

    await standby.promote();
    const promotedAt = performance.now();
    await vi.waitFor(() => expect(broker.health.isServing).toBe(true), { timeout: 15_000, interval: 50 });
    const downMs = performance.now() - promotedAt;
    // The storage recovery retries at most every 2 s; a loaded machine gets margin on top.
    expect(downMs).toBeLessThan(10_000);

    const received = new Set<string>();
    for (;;) {
      const { messages } = await rpc.receive({ queue: "jobs", maxMessages: 10 });
      if (messages.length === 0) break;
      for (const message of messages) received.add(message.messageId);
    }
    for (const id of acknowledged) expect(received.has(id), `acknowledged ${id} delivered`).toBe(true);
    // And it writes on the new primary.
    await rpc.send({ queue: "jobs", body: Buffer.from("after") });
  }, 90_000);
});
