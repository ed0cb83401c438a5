import { Server, ServerCredentials } from "@grpc/grpc-js";
import { Broker } from "../broker/broker.js";
import type { Clock } from "../broker/clock.js";
import { addQueueService } from "../grpc/queue-service.js";
import { silentLogger, type Logger } from "../logging/logger.js";
import { ClassicLevelStore, type Durability } from "../store/classic-level-store.js";

/** How to run a broker. */
export interface HoldshelfServerOptions {
  readonly dataDir: string;
  /** host:port; port 0 picks a free one. */
  readonly listen: string;
  readonly durability?: Durability;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

/** A running broker: its store, rules and gRPC server. */
export interface HoldshelfServer {
  /** The address it listens on, with the real port. */
  readonly address: string;
  readonly port: number;
  readonly broker: Broker;
  readonly store: ClassicLevelStore;
  /** Stops taking calls, lets running ones finish, and closes the store cleanly. */
  shutdown(): Promise<void>;
}

// Requests larger than a SendBatch may be are refused by grpc-js itself;
// below this, the broker's own checks answer with MESSAGE_TOO_LARGE.
const maxRequestBytes = 8 * 1024 * 1024;
// A silent connection is pinged after this long, and dropped if no answer comes in the timeout.
const keepaliveTimeMs = 30_000;
const keepaliveTimeoutMs = 10_000;
// Calls still running this long after a shutdown began are cut off.
const shutdownGraceMs = 10_000;

/** Opens the store, loads the broker and starts serving gRPC. */
export async function startHoldshelfServer(options: HoldshelfServerOptions): Promise<HoldshelfServer> {
  const logger = options.logger ?? silentLogger;
  const store = await ClassicLevelStore.open({
    dataDir: options.dataDir,
    ...(options.durability === undefined ? {} : { durability: options.durability }),
  });
  let broker: Broker;
  try {
    broker = await Broker.open({
      store,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      onBackgroundError: (error) => logger.error("background work failed", { error }),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const server = new Server({
    "grpc.max_receive_message_length": maxRequestBytes,
    // Pings find clients that vanished without a reset (power loss, a
    // partition), so their streams end and release_on_disconnect runs.
    "grpc.keepalive_time_ms": keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": keepaliveTimeoutMs,
  });
  addQueueService(server, broker, (error) => logger.error("unexpected error in a call", { error }));
  let port: number;
  try {
    port = await bind(server, options.listen);
  } catch (error) {
    broker.close();
    await store.close();
    throw error;
  }
  const host = options.listen.slice(0, options.listen.lastIndexOf(":"));
  return {
    address: `${host}:${port}`,
    port,
    broker,
    store,
    async shutdown() {
      // Waiting receives answer empty now, so the graceful shutdown need not wait out their polls.
      broker.close();
      await gracefulShutdown(server);
      // A dead-letter move half done must finish before the store closes.
      await broker.settled();
      await store.close();
    },
  };
}

function bind(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => {
      if (error) reject(new Error(`cannot listen on ${address}: ${error.message}`, { cause: error }));
      else resolve(port);
    });
  });
}

function gracefulShutdown(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.forceShutdown(), shutdownGraceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
