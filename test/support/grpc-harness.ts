import type { RenewalLinger } from "../../src/broker/renewal-linger.js";
import type { Clock } from "../../src/time/clock.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import type { Logger } from "../../src/logging/logger.js";
import type { Durability } from "../../src/store/classic-level-store.js";
import { faultyLevel } from "./faulty-level.js";
import { startTestCluster } from "./test-cluster.js";
import { freshClusterStorage, inCluster, onPostgres } from "./test-storage.js";
import { makeTempDir } from "./temp-dir.js";
import { WriteFault } from "./write-fault.js";

/**
 * A real broker on a free loopback port with a temporary data directory (or,
 * in the PostgreSQL run, a new database: test-storage.ts), and a client of it.
 */
export interface GrpcHarness {
  server: HoldshelfServer;
  rpc: QueueServiceRpc & { close(): void };
  dataDir: string;
  /** Makes every write of the server's store fail while set, as a failing disk would; survives restarts and reopens. */
  readonly writeFault: WriteFault;
  /** Stops the server (keeping the data) and starts a new one on the same directory. */
  restart(): Promise<void>;
  /** Resolves once background work (dead-letter moves) finished on every broker of the harness. */
  settled(): Promise<void>;
  /** The broker that serves a queue and writes its store: `server`, except in the cluster run. */
  serverOf(queue: string): HoldshelfServer;
  stop(): Promise<void>;
}

/** How a test wants its broker. */
export interface GrpcHarnessOptions {
  clock?: Clock;
  durability?: Durability;
  metricsListen?: string;
  logger?: Logger;
  renewalLinger?: RenewalLinger;
}

/**
 * Starts a GrpcHarness, on the system clock and with fsync durability unless
 * told otherwise; with `metricsListen`, also the metrics listener.
 */
export async function startGrpcHarness(options: GrpcHarnessOptions = {}): Promise<GrpcHarness> {
  if (inCluster) return startTestCluster(options);
  const dir = await makeTempDir();
  const writeFault = new WriteFault();
  const createDatabase = faultyLevel(writeFault);
  // On PostgreSQL (test-storage.ts) the data directory stays empty, and write faults are LevelDB's only.
  const postgres = onPostgres ? { postgres: await freshClusterStorage() } : {};
  const start = () =>
    startHoldshelfServer({ dataDir: dir.path, listen: "127.0.0.1:0", createDatabase, ...postgres, ...options });
  const harness: GrpcHarness = {
    server: await start(),
    rpc: undefined as never,
    dataDir: dir.path,
    writeFault,
    async restart() {
      harness.rpc.close();
      await harness.server.shutdown();
      harness.server = await start();
      harness.rpc = createQueueServiceRpc(harness.server.address);
    },
    settled: () => harness.server.broker.settled(),
    serverOf: () => harness.server,
    async stop() {
      harness.rpc.close();
      await harness.server.shutdown();
      await dir.remove();
    },
  };
  harness.rpc = createQueueServiceRpc(harness.server.address);
  return harness;
}
