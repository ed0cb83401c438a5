import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { Registry } from "prom-client";
import { file_holdshelf_v1_queue_service } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { Broker } from "../broker/broker.js";
import type { Clock } from "../broker/clock.js";
import { addHealthService, healthServiceDefinition, HealthStatus } from "../grpc/health-service.js";
import { addQueueService, queueServiceDefinition } from "../grpc/queue-service.js";
import { addReflectionService } from "../grpc/reflection-service.js";
import { silentLogger, type Logger } from "../logging/logger.js";
import { createHoldshelfMetrics } from "../metrics/holdshelf-metrics.js";
import { startMetricsServer, type MetricsServer } from "../metrics/metrics-server.js";
import { ClassicLevelStore, type Durability } from "../store/classic-level-store.js";

/** How to run a broker. */
export interface HoldshelfServerOptions {
  readonly dataDir: string;
  /** host:port; port 0 picks a free one. */
  readonly listen: string;
  /** host:port of the HTTP listener for /metrics, /healthz and /readyz; none if unset. */
  readonly metricsListen?: string;
  readonly durability?: Durability;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

/** A running broker: its store, rules and gRPC server. */
export interface HoldshelfServer {
  /** The address it listens on, with the real port. */
  readonly address: string;
  readonly port: number;
  /** The metrics listener's address with its real port, if there is one. */
  readonly metricsAddress: string | undefined;
  readonly broker: Broker;
  readonly store: ClassicLevelStore;
  /** Every metric the broker exports (also served on the metrics listener). */
  readonly metrics: Registry;
  /** What the gRPC health service reports. */
  readonly health: HealthStatus;
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

/** Opens the store, loads the broker and starts serving gRPC (and metrics, if asked). */
export async function startHoldshelfServer(options: HoldshelfServerOptions): Promise<HoldshelfServer> {
  const logger = options.logger ?? silentLogger;
  const metrics = createHoldshelfMetrics();
  const store = await ClassicLevelStore.open({
    dataDir: options.dataDir,
    ...(options.durability === undefined ? {} : { durability: options.durability }),
    commitObserver: {
      written: metrics.storage.written,
      failed(error, commits) {
        metrics.storage.failed(error, commits);
        // One line per failed batch, not per call: the calls answer for themselves.
        logger.error("storage write failed", { commits, error });
      },
    },
  });
  let broker: Broker;
  try {
    broker = await Broker.open({
      store,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      onBackgroundError: (error) => logger.error("background work failed", { error }),
      events: metrics.broker,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  metrics.broker.observe(broker);
  const health = new HealthStatus();
  const server = new Server({
    "grpc.max_receive_message_length": maxRequestBytes,
    // Pings find clients that vanished without a reset (power loss, a
    // partition), so their streams end and release_on_disconnect runs.
    "grpc.keepalive_time_ms": keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": keepaliveTimeoutMs,
    interceptors: [metrics.grpc.interceptor],
  });
  addQueueService(server, broker, logger);
  addHealthService(server, health);
  addReflectionService(server, [file_holdshelf_v1_queue_service]);
  metrics.grpc.preRegister([queueServiceDefinition, healthServiceDefinition]);
  let port: number;
  let metricsServer: MetricsServer | undefined;
  try {
    port = await bind(server, options.listen);
    if (options.metricsListen !== undefined) {
      metricsServer = await startMetricsServer({
        listen: options.metricsListen,
        registry: metrics.registry,
        ready: () => !health.isShutDown,
        onScrapeError: (error) => logger.error("metrics scrape failed", { error }),
      });
    }
  } catch (error) {
    server.forceShutdown();
    broker.close();
    await store.close();
    throw error;
  }
  const host = options.listen.slice(0, options.listen.lastIndexOf(":"));
  return {
    address: `${host}:${port}`,
    port,
    metricsAddress: metricsServer?.address,
    broker,
    store,
    metrics: metrics.registry,
    health,
    async shutdown() {
      // Probes see NOT_SERVING (and /readyz 503) for the whole drain, and Watch calls end.
      health.shutdown();
      // Waiting receives answer empty now, so the graceful shutdown need not wait out their polls.
      broker.close();
      await gracefulShutdown(server);
      // A dead-letter move half done must finish before the store closes.
      await broker.settled();
      await store.close();
      await metricsServer?.close();
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
