import { QueueClient } from "../../src/client/queue-client.js";
import type { QueueConfigInput } from "../../src/client/types.js";
import type { QueueCounts } from "../../src/broker/queue-state.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { freePort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";

/**
 * The broker a conformance run's workers talk to: real, on a loopback port
 * that stays the same across restart(), so that a worker's reconnect finds
 * the restarted broker where the old one was.
 */
export interface ConformanceBroker {
  readonly address: string;
  /** The test's own client: sends jobs and plays the "someone else" of the scenarios. */
  readonly client: QueueClient;
  createQueue(name: string, config: QueueConfigInput): Promise<void>;
  /** A queue's counts, read from the broker's memory: exact at the moment of the call. */
  counts(queue: string): Pick<QueueCounts, "visible" | "inFlight" | "delayed">;
  /** How many long-poll Receives are waiting for messages. */
  waitingReceives(): number;
  /** Shuts the broker down (ending every stream with SHUTTING_DOWN) and starts it again on the same data and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a ConformanceBroker on a free port and a temporary data directory. */
export async function startConformanceBroker(): Promise<ConformanceBroker> {
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
    counts(queue) {
      const { visible, inFlight, delayed } = server.broker.getQueue(queue).counts;
      return { visible, inFlight, delayed };
    },
    waitingReceives: () => server.broker.waitingReceiveCount,
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
