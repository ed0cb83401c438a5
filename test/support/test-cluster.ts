// The cluster run of the gRPC and client suites (test-storage.ts): three
// real brokers on one new database, two owning the shards between them and
// one owning none, which the test's client talks to. Every call the test's
// own client makes is forwarded to the owner of its queue, long polls and
// Heartbeat streams included, as a client of any broker of a real cluster
// sees it.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { vi } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import {
  startHoldshelfServer,
  type HoldshelfServer,
  type HoldshelfServerOptions,
} from "../../src/server/holdshelf-server.js";
import type { GrpcHarness, GrpcHarnessOptions } from "./grpc-harness.js";
import { freshDatabase } from "./test-storage.js";
import { WriteFault } from "./write-fault.js";

/** Few shards: each owner gets four, and a test's queues land on both. */
const shardCount = 8;

/** A GrpcHarness whose `server` is the routing broker of a three-broker cluster. */
export async function startTestCluster(options: GrpcHarnessOptions): Promise<GrpcHarness> {
  const url = await freshDatabase();
  const { metricsListen, ...shared } = options;
  const start = (
    nodeId: string,
    routeOnly: boolean,
    extra: { metricsListen?: string } = {},
  ): Promise<HoldshelfServer> => startClusterMember(url, nodeId, { routeOnly, ...shared, ...extra });
  let owners: HoldshelfServer[] = [];
  const startAll = async (): Promise<HoldshelfServer> => {
    owners = [await start("owner-1", false), await start("owner-2", false)];
    const entry = await start("entry", true, metricsListen === undefined ? {} : { metricsListen });
    await settledRoutes(entry, owners);
    return entry;
  };
  const stopAll = async (entry: HoldshelfServer): Promise<void> => {
    await entry.shutdown();
    await Promise.all(owners.map((owner) => owner.shutdown()));
  };
  const harness: GrpcHarness = {
    server: await startAll(),
    rpc: undefined as never,
    dataDir: "/nonexistent-in-cluster-mode",
    writeFault: new WriteFault(),
    async restart() {
      harness.rpc.close();
      await stopAll(harness.server);
      harness.server = await startAll();
      harness.rpc = entryClient(harness.server);
    },
    async settled() {
      // A dead-letter move between the owners lands in an inbox first: settled once the other owner took it in.
      for (;;) {
        await Promise.all(owners.map((owner) => owner.broker.settled()));
        if ((await inboxLength(url)) === 0) break;
        await sleep(5);
      }
      await Promise.all(owners.map((owner) => owner.cluster!.inboxTaken()));
    },
    serverOf(queue) {
      const owner = owners.find((server) => server.cluster!.route(queue)?.kind === "local");
      if (owner === undefined) throw new Error(`no broker of the cluster serves queue "${queue}"`);
      return owner;
    },
    async stop() {
      harness.rpc.close();
      await stopAll(harness.server);
    },
  };
  harness.rpc = entryClient(harness.server);
  return harness;
}

/**
 * Starts one broker of a test cluster on the database at `url`, with the
 * test cluster's shard count, on a free loopback port unless told otherwise;
 * `routeOnly` makes it own no shards.
 */
export function startClusterMember(
  url: string,
  nodeId: string,
  options: Partial<Omit<HoldshelfServerOptions, "postgres">> & { routeOnly?: boolean } = {},
): Promise<HoldshelfServer> {
  const { routeOnly = false, ...rest } = options;
  return startHoldshelfServer({
    dataDir: "/nonexistent-in-cluster-mode",
    listen: "127.0.0.1:0",
    postgres: { urls: [url], nodeId, shardCount, ...(routeOnly ? { routeOnly } : {}) },
    ...rest,
  });
}

/**
 * Resolves once the owners hold their even share of the test cluster's
 * shards each, and the entry routes every shard to the owner that serves it.
 */
export async function settledRoutes(entry: HoldshelfServer, owners: readonly HoldshelfServer[]): Promise<void> {
  await vi.waitFor(
    () => {
      const share = shardCount / owners.length;
      for (const owner of owners) if (owner.cluster!.ownedShardCount !== share) throw new Error("still balancing");
      for (let shard = 0; shard < shardCount; shard++) {
        const route = entry.cluster!.routeShard(shard);
        const server = owners.find((owner) => owner.cluster!.routeShard(shard)?.kind === "local");
        if (route?.kind !== "remote" || server === undefined || route.address !== server.address)
          throw new Error(`shard ${shard} is not routed yet`);
      }
    },
    { timeout: 15_000, interval: 20 },
  );
}

/**
 * The test's own client: it ignores owner hints, so that every call it makes
 * is forwarded. Clients a test makes itself (a QueueClient, a Consumer)
 * follow them, as clients of a real cluster do: their first call on a
 * queue is forwarded, the rest go to its broker.
 */
function entryClient(entry: HoldshelfServer): ReturnType<typeof createQueueServiceRpc> {
  return createQueueServiceRpc(entry.address, { followOwnerHints: false });
}

/** Messages waiting in the cluster's inboxes. */
async function inboxLength(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ waiting: string }>("SELECT count(*) AS waiting FROM holdshelf_inbox");
    return Number(rows[0]!.waiting);
  } finally {
    await client.end();
  }
}
