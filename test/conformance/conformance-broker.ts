import { QueueClient } from "../../src/client/queue-client.js";
import type { QueueConfigInput } from "../../src/client/types.js";
import type { QueueCounts } from "../../src/broker/queue-state.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { freePort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";
import { settledRoutes, startClusterMember } from "../support/test-cluster.js";
import { freshDatabase, inCluster } from "../support/test-storage.js";

/**
 * The broker a conformance run's workers talk to: real, on a loopback port
 * that stays the same across restart(), so that a worker's reconnect finds
 * the restarted broker where the old one was. In the cluster run
 * (HOLDSHELF_TEST_STORE=cluster) it is three brokers on PostgreSQL, and the
 * workers talk to the one that owns no shards, so every call of theirs is
 * forwarded (the TypeScript client's later calls go to the owner its hints name).
 */
export interface ConformanceBroker {
  /** Where the workers connect. */
  readonly address: string;
  /** The test's own client: sends jobs and plays the "someone else" of the scenarios. */
  readonly client: QueueClient;
  createQueue(name: string, config: QueueConfigInput): Promise<void>;
  /** A queue's counts, read from the memory of the broker that serves it: exact at the moment of the call. */
  counts(queue: string): Pick<QueueCounts, "visible" | "inFlight" | "delayed">;
  /** How many consumers wait for messages: long-poll Receives waiting, and Subscribe streams open (of any queue). */
  listening(): number;
  /**
   * Shuts down the broker that serves `queue` (ending its streams with
   * SHUTTING_DOWN, or, in the cluster, handing its shards to the other
   * owner) and starts it again on the same data.
   */
  restart(queue: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the ConformanceBroker of this run: one broker on LevelDB, or the cluster. */
export function startConformanceBroker(): Promise<ConformanceBroker> {
  return inCluster ? startConformanceCluster() : startSingleBroker();
}

async function startSingleBroker(): Promise<ConformanceBroker> {
  const dir = await makeTempDir();
  const address = `127.0.0.1:${await freePort()}`;
  const start = () => startHoldshelfServer({ dataDir: dir.path, listen: address });
  let server: HoldshelfServer = await start();
  const client = new QueueClient(address);
  return {
    address,
    client,
    async createQueue(name, config) {
      await client.createQueue(name, config);
    },
    counts: (queue) => countsOf(server, queue),
    listening: () => listeningOn(server),
    async restart() {
      await server.shutdown();
      server = await start();
    },
    async stop() {
      client.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}

async function startConformanceCluster(): Promise<ConformanceBroker> {
  const url = await freshDatabase();
  const address = `127.0.0.1:${await freePort()}`;
  const owners = [await startClusterMember(url, "owner-1"), await startClusterMember(url, "owner-2")];
  const entry = await startClusterMember(url, "entry", { listen: address, routeOnly: true });
  await settledRoutes(entry, owners);
  const client = new QueueClient(address, { followOwnerHints: false });
  const ownerOf = (queue: string): HoldshelfServer => {
    const owner = owners.find((server) => server.cluster!.route(queue)?.kind === "local");
    if (owner === undefined) throw new Error(`no broker serves queue "${queue}" now`);
    return owner;
  };
  return {
    address,
    client,
    async createQueue(name, config) {
      await client.createQueue(name, config);
    },
    counts: (queue) => countsOf(ownerOf(queue), queue),
    listening: () => owners.reduce((sum, owner) => sum + listeningOn(owner), 0),
    async restart(queue) {
      const owner = ownerOf(queue);
      const nodeId = owner === owners[0] ? "owner-1" : "owner-2";
      await owner.shutdown();
      owners[owners.indexOf(owner)] = await startClusterMember(url, nodeId);
      await settledRoutes(entry, owners);
    },
    async stop() {
      client.close();
      await entry.shutdown();
      await Promise.all(owners.map((owner) => owner.shutdown()));
    },
  };
}

function listeningOn(server: HoldshelfServer): number {
  return server.broker.waitingReceiveCount + server.broker.streams.subscriberCount;
}

function countsOf(server: HoldshelfServer, queue: string): Pick<QueueCounts, "visible" | "inFlight" | "delayed"> {
  const { visible, inFlight, delayed } = server.broker.getQueue(queue).counts;
  return { visible, inFlight, delayed };
}
