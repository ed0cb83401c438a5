// How long a broker takes to serve again once a PostgreSQL standby is
// promoted: holdshelf's part of a failover's time. While no host takes
// writes the broker asks the hosts again every few hundred milliseconds
// (not on the storage recovery's 2 s backoff for disks), and it finds the
// promoted host at once even when the dead one is listed first.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import type { Logger } from "../../src/logging/logger.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { startPostgres, startStandby, skipWithoutPostgres } from "../support/postgres-server.js";
import { sleep } from "../support/wait.js";

/** A logger that keeps the time of each line with this message. */
function attemptLogger(message: string): { logger: Logger; times: number[] } {
  const times: number[] = [];
  const keep = (line: string): void => {
    if (line === message) times.push(performance.now());
  };
  return { logger: { debug: keep, info: keep, warn: keep, error: keep }, times };
}

describe.skipIf(skipWithoutPostgres)("a broker's part of a PostgreSQL failover", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it("asks the hosts again every few hundred milliseconds and serves within a second of the promotion", async () => {
    const primary = await startPostgres({ synchronousStandby: "standby1" });
    cleanups.push(() => primary.stop());
    const standby = await startStandby(primary, "standby1");
    cleanups.push(() => standby.stop());
    const { logger, times: attempts } = attemptLogger("storage recovery attempt failed");
    const broker: HoldshelfServer = await startHoldshelfServer({
      dataDir: "/nonexistent-in-cluster-mode",
      listen: "127.0.0.1:0",
      logger,
      postgres: { urls: [primary.url(), standby.url()], nodeId: "broker", shardCount: 4 },
    });
    cleanups.push(() => broker.shutdown());
    const rpc = createQueueServiceRpc(broker.address);
    cleanups.push(async () => rpc.close());
    await rpc.createQueue({ name: "jobs" });
    const sent = await rpc.send({ queue: "jobs", body: Buffer.from("before") });

    await primary.kill();
    await expect(rpc.send({ queue: "jobs", body: Buffer.from("during") })).rejects.toThrow();
    await vi.waitFor(() => expect(broker.health.isServing).toBe(false), { timeout: 5000, interval: 20 });
    // An outage as long as a promotion by a failover manager: a backoff that doubles would by now wait 2 s.
    await sleep(3000);
    await standby.promote();
    const promotedAt = performance.now();
    await vi.waitFor(() => expect(broker.health.isServing).toBe(true), { timeout: 15_000, interval: 10 });
    const servingMs = performance.now() - promotedAt;

    // The attempts of the outage's last two seconds, each made a short wait after the one before.
    const late = attempts.filter((at) => at > promotedAt - 2000 && at <= promotedAt);
    expect(late.length).toBeGreaterThanOrEqual(4);
    // A short wait plus an attempt's own time on a loaded machine.
    expect(servingMs).toBeLessThan(1000);
    const { messages } = await rpc.receive({ queue: "jobs", maxMessages: 10 });
    expect(messages.map((message) => message.messageId)).toContain(sent.messageId);
  }, 90_000);
});
