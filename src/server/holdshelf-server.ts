import { Server } from "@grpc/grpc-js";
import type { Registry } from "prom-client";
import { file_holdshelf_v1_admin_service } from "../../gen/holdshelf/v1/admin_service_pb.js";
import { file_holdshelf_v1_queue_service } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { AuthGate } from "../auth/auth-gate.js";
import { reloadAuthFile, reloadSqsCredentials } from "../auth/auth-reload.js";
import type { Principal } from "../auth/permissions.js";
import { authorizeQueueService } from "../service/queue-service-auth.js";
import type { CallContext } from "../service/call-context.js";
import { createTokenCheck } from "../grpc/token-interceptor.js";
import { Broker } from "../broker/broker.js";
import { teeEvents } from "../broker/broker-events-tee.js";
import { localRouter, type QueueRouter } from "../cluster/queue-router.js";
import { shardRouter } from "../cluster/shard-router.js";
import type { RenewalLinger } from "../broker/renewal-linger.js";
import { systemClock, type Clock } from "../time/clock.js";
import { addHealthService, healthServiceDefinition, HealthStatus } from "../grpc/health-service.js";
import { routeQueueCalls } from "../grpc/forwarding/forwarding-handlers.js";
import { PeerClients } from "../grpc/forwarding/peer-clients.js";
import { addAdminService, adminServiceDefinition } from "../grpc/admin-service.js";
import { addQueueService } from "../grpc/queue-service.js";
import { adminServiceHandlers } from "../service/admin-service-handlers.js";
import { ClassicLevelStore } from "../store/classic-level-store.js";
import { queueServiceHandlers } from "../service/queue-service-handlers.js";
import { queueServiceDefinition } from "../protocol/queue-service-definition.js";
import { addReflectionService } from "../grpc/reflection-service.js";
import { requestFramingInterceptor } from "../grpc/request-framing.js";
import { createStreamLimit } from "../grpc/stream-limit.js";
import { silentLogger, type Logger } from "../logging/logger.js";
import { createHoldshelfMetrics } from "../metrics/holdshelf-metrics.js";
import { startMetricsServer } from "../metrics/metrics-server.js";
import { peerCredentials } from "../security/peer-credentials.js";
import { serverCredentials } from "../security/tls-credentials.js";
import type { ServerTls } from "../net/server-tls.js";
import type { ShardCluster } from "../cluster/shard-cluster.js";
import type { CommitObserver } from "../store/group-commit.js";
import type { RecoverableStore } from "../store/recoverable-store.js";
import { isStorageUnavailable } from "../store/storage-unavailable.js";
import { isQueueMoving } from "../store/postgres/queue-moving.js";
import { openStorage, type StorageOptions } from "./open-storage.js";
import { superviseStorage } from "./storage-recovery.js";
import { resolveLimits, type HoldshelfLimits } from "./server-limits.js";
import { raiseReceiveWindows } from "../grpc/http2-windows.js";
import { applyQueueFile, type QueueDefinitionsFile } from "./apply-queue-file.js";
import { sqsActions } from "../sqs/actions/sqs-actions.js";

import { readSqsCredentials, type SqsKeyring } from "../sqs/auth/sqs-credentials.js";
import { verifySignature } from "../sqs/auth/verify-signature.js";
import type { QueueHandlers } from "../service/queue-calls.js";
import { startSqsListener, type SqsListener } from "../sqs/sqs-listener.js";
import { builtAssetsDir, loadAssets } from "../console/console-assets.js";
import { startConsoleListener, type ConsoleListener } from "../console/console-listener.js";
import { QueueHistory, type HistoryShape } from "../console/queue-history.js";

/** The SQS endpoint's settings (docs/sqs.md). */
export interface SqsEndpoint {
  /** host:port of its HTTP listener; port 0 picks a free one. */
  readonly listen: string;
  /** The access keys' file (src/sqs/auth/): requests must be signed with one of its keys. Unset, any request is taken. */
  readonly credentialsFile?: string;
  /** The account id in queue URLs and ARNs. */
  readonly accountId: string;
  /** The region in ARNs. */
  readonly region: string;
  /** Where clients reach the endpoint, if not at its listen address (a proxy, a container's published port). */
  readonly advertisedUrl?: string;
}

/** How to run a broker: where it keeps its data (StorageOptions), and how it serves. */
export interface HoldshelfServerOptions extends StorageOptions {
  /** host:port; port 0 picks a free one. */
  readonly listen: string;
  /** host:port of the HTTP listener for /metrics, /healthz and /readyz; none if unset. */
  readonly metricsListen?: string;
  /** TLS for the gRPC listener (mutual TLS if it has a client CA); plaintext if unset. */
  readonly tls?: ServerTls;
  /** TLS for the metrics listener (HTTPS, mutual if it has a client CA); plain HTTP if unset. */
  readonly metricsTls?: ServerTls;
  /** Cluster mode with TLS: the CA that issued the other brokers' certificates (src/security/peer-credentials.ts). */
  readonly peerCa?: Buffer;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Capacity limits (docs/operations.md "Limits"); unset ones take their defaults. */
  readonly limits?: Partial<HoldshelfLimits>;
  /** The auth file of bearer tokens (docs/security.md "Authentication"); every caller may do everything if unset. */
  readonly authFile?: string;
  /** When Heartbeat renewals' writes wait to share an fsync (src/broker/renewal-linger.ts); its default if unset. */
  readonly renewalLinger?: RenewalLinger;
  /** Which broker serves each queue; every queue is this broker's if unset. Tests pass a fixed one. */
  readonly router?: QueueRouter;
  /** Serve the SQS API too, over HTTP (HTTPS with `tls`); off if unset. */
  readonly sqs?: SqsEndpoint;
  /** Serve the admin console (docs/console.md) on this host:port, over HTTP (HTTPS with `tls`); off if unset. */
  readonly consoleListen?: string;
  /** The console's history sampling; its default if unset. Tests sample faster. */
  readonly consoleHistory?: HistoryShape;
  /** Queues to create and update before serving (`serve --queues`, src/server/apply-queues.ts); none if unset. */
  readonly queues?: QueueDefinitionsFile;
}

/** A running broker: its store, rules and gRPC server. */
export interface HoldshelfServer {
  /** The address it listens on, with the real port. */
  readonly address: string;
  readonly port: number;
  /** The metrics listener's address with its real port, if there is one. */
  readonly metricsAddress: string | undefined;
  /** The SQS endpoint's address with its real port, if it serves one. */
  readonly sqsAddress: string | undefined;
  /** The start of the SQS endpoint's queue URLs (its endpoint URL for SDKs), if it serves one. */
  readonly sqsUrl: string | undefined;
  /** The admin console's address to open in a browser, if it serves one. */
  readonly consoleUrl: string | undefined;
  readonly broker: Broker;
  readonly store: RecoverableStore;
  /** Cluster mode's membership, balancing and routes; undefined in the embedded mode. */
  readonly cluster: ShardCluster | undefined;
  /** Every metric the broker exports (also served on the metrics listener). */
  readonly metrics: Registry;
  /** What the gRPC health service reports. */
  readonly health: HealthStatus;
  /** Stops taking calls, lets running ones finish, and closes the store cleanly. */
  shutdown(): Promise<void>;
  /**
   * Reads the auth file again and logs the outcome; a bad file leaves the
   * tokens in use. Resolves to whether the new file took effect.
   */
  reloadAuth(): Promise<boolean>;
}

// A silent connection is pinged after this long, and dropped if no answer comes in the timeout.
const keepaliveTimeMs = 30_000;
const keepaliveTimeoutMs = 10_000;
// The SQS endpoint's largest request body (see startSqs): 4 MiB of form-encoded messages and 64 KiB for the rest.
const maxSqsRequestBytes = 4 * 1024 * 1024 + 64 * 1024;
// The console's largest request body: a test message and its attributes as JSON text.
const maxConsoleRequestBytes = 4 * 1024 * 1024;
// A cluster broker tries its queue file this often while the other brokers start.
const clusterApplyAttempts = 20;
// Calls still running this long after a shutdown began are cut off.
const shutdownGraceMs = 10_000;

/** Opens the store, loads the broker and starts serving gRPC (and metrics, if asked). */
export async function startHoldshelfServer(options: HoldshelfServerOptions): Promise<HoldshelfServer> {
  const logger = options.logger ?? silentLogger;
  // Before the store opens: a bad auth file is an operator's typo, refused at once.
  const gate = options.authFile === undefined ? undefined : await AuthGate.open(options.authFile);
  if (gate !== undefined) logger.info("auth file loaded", { path: gate.path, tokens: gate.tokenCount });
  // Read with the auth file, before the store opens: a bad file is a typo, refused at once.
  const sqsCredentials = options.sqs?.credentialsFile;
  if (sqsCredentials !== undefined && options.postgres !== undefined) {
    // A call another broker owns is passed on over gRPC, which carries bearer tokens, not the signer.
    throw new Error("SQS access keys (--sqs-credentials) are not supported in cluster mode yet");
  }
  const keyring = sqsCredentials === undefined ? undefined : await readSqsCredentials(sqsCredentials);
  if (keyring !== undefined) logger.info("SQS credentials file loaded", { path: keyring.path, keys: keyring.keyCount });
  const limits = resolveLimits(options.limits);
  const metrics = createHoldshelfMetrics();
  // Bound once the broker is up: a failed write starts the storage recovery (storage-recovery.ts).
  let storageFailed = (_error: unknown): void => undefined;
  const commitObserver: CommitObserver = {
    written: metrics.storage.written,
    failed(error, commits) {
      metrics.storage.failed(error, commits);
      // The recovery logs one line per outage; later commits are refused unwritten.
      storageFailed(error);
    },
  };
  // Before the store: a standby (cluster mode) waits in openStorage for as long
  // as another broker serves, and probes and Prometheus should see it alive
  // (/healthz) but not ready (/readyz 503) meanwhile.
  let health: HealthStatus | undefined;
  const metricsServer =
    options.metricsListen === undefined
      ? undefined
      : await startMetricsServer({
          listen: options.metricsListen,
          ...(options.metricsTls === undefined ? {} : { tls: options.metricsTls }),
          registry: metrics.registry,
          // Not ready while starting, shutting down or while storage is down.
          ready: () => health?.isServing ?? false,
          onScrapeError: (error) => logger.error("metrics scrape failed", { error }),
        });
  // What the start opened so far, in order: a step that fails closes them, last first.
  const opened: (() => unknown)[] = [];
  const unwind = async (error: unknown): Promise<never> => {
    for (const close of opened.reverse()) await close();
    throw error;
  };
  if (metricsServer !== undefined) opened.push(() => metricsServer.close());
  const { store, cluster } = await openStorage(
    options,
    commitObserver,
    logger,
    (error) => storageFailed(error),
    metrics.registry,
  ).catch(unwind);
  opened.push(() => store.close());
  // Before the broker: the console's history counts the broker's events from the start.
  const history = options.consoleListen === undefined ? undefined : new QueueHistory(options.consoleHistory);
  const broker = await Broker.open({
    store,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    // Storage failures were logged once, when storage went down; work cut off
    // because its queue moved to another broker (cluster mode) is no failure.
    onBackgroundError: (error) => {
      if (!isStorageUnavailable(error) && !isQueueMoving(error)) logger.error("background work failed", { error });
    },
    events: history === undefined ? metrics.broker : teeEvents(metrics.broker, history),
    limits,
    ...(options.renewalLinger === undefined ? {} : { renewalLinger: options.renewalLinger }),
    ...(cluster === undefined ? {} : { cluster: cluster.clusterQueues }),
  }).catch(unwind);
  metrics.broker.observe(broker);
  history?.observe(broker);
  health = new HealthStatus();
  const clock = options.clock ?? systemClock;
  const recovery = superviseStorage({ store, broker, health, metrics: metrics.storage, logger, clock });
  storageFailed = (error) => recovery.failed(error);
  // A recovery under way (a write failed during start) must not reopen the store after this.
  opened.push(
    () => recovery.stop(),
    () => broker.close(),
  );
  // Which broker serves each queue; the address is the listener's once bound (or --advertise).
  // In the embedded mode there is no other broker to name: its answers carry no owner hint (an empty address).
  const self = {
    nodeId: options.postgres?.nodeId ?? "",
    address: options.postgres === undefined ? "" : (options.postgres.advertisedAddress ?? options.listen),
  };
  const router = options.router ?? (cluster === undefined ? localRouter(self) : shardRouter(cluster, self));
  if (cluster !== undefined) {
    await cluster.start({
      gained: (queues) => broker.adoptQueues(queues),
      releasing: (names, error) => broker.evictQueues(names, error),
      arrived: (arrivals) => broker.takeArrivals(arrivals),
    });
  }
  const server = new Server({
    // Larger requests are refused by grpc-js itself (RESOURCE_EXHAUSTED);
    // below this, the broker's own checks answer with MESSAGE_TOO_LARGE.
    "grpc.max_receive_message_length": limits.maxRequestBytes,
    // The HTTP/2 backstop behind the stream limit: above it a client queues
    // new calls instead of failing, so it sits well over the limit and only
    // bounds streams the limit no longer counts (answered, but not yet
    // closed by a client that never ends its side).
    "grpc.max_concurrent_streams": 2 * limits.maxStreamsPerConnection,
    // Pings find clients that vanished without a reset (power loss, a
    // partition), so their streams end and release_on_disconnect runs.
    "grpc.keepalive_time_ms": keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": keepaliveTimeoutMs,
    interceptors: [
      metrics.grpc.interceptor,
      // Inside the metrics interceptor, so calls it refuses show in grpc_server_handled_total.
      createStreamLimit(limits.maxStreamsPerConnection),
      // Callers without a valid token are refused before their request is read (health stays open).
      ...(gate === undefined ? [] : [createTokenCheck(gate)]),
      // Outside the metrics interceptor, so the rewritten status is the one counted.
      requestFramingInterceptor,
    ],
  });
  // One handler map for every wire: the service's handlers, routed to each queue's
  // owner in cluster mode over gRPC channels to the other brokers.
  const peers = new PeerClients({
    maxRequestBytes: limits.maxRequestBytes,
    credentials: peerCredentials(options.tls, options.peerCa),
  });
  const handlers = routeQueueCalls(queueServiceHandlers(broker, logger), router, peers);
  addQueueService(server, broker, handlers, logger, gate, { router, peers });
  opened.push(
    () => peers.close(),
    () => server.forceShutdown(),
  );
  // Only the embedded store can copy itself; cluster mode's data is PostgreSQL's to back up.
  const backup = store instanceof ClassicLevelStore ? (time: number) => store.backup(time) : undefined;
  addAdminService(server, adminServiceHandlers(backup, clock), logger, gate);
  addHealthService(server, health);
  addReflectionService(server, [file_holdshelf_v1_queue_service, file_holdshelf_v1_admin_service]);
  metrics.grpc.preRegister([queueServiceDefinition, adminServiceDefinition, healthServiceDefinition]);
  // The embedded broker applies its queues before it listens, so no client sees it without them. In
  // cluster mode, queues may be other brokers' to create, and they may be starting too: each
  // broker applies once it serves (below), and their applies converge (applyQueues).
  if (options.queues !== undefined && cluster === undefined)
    await applyQueueFile(options.queues, handlers, logger, 1, options.signal).catch(unwind);
  const port = await bind(server, options.listen, options.tls).catch(unwind);
  const sqs =
    options.sqs === undefined
      ? undefined
      : await startSqs(options.sqs, options, handlers, keyring, limits, metrics, logger).catch(unwind);
  if (sqs !== undefined) opened.push(() => sqs.close());
  const consoleListener =
    options.consoleListen === undefined || history === undefined
      ? undefined
      : await startConsole(options.consoleListen, options, handlers, gate, history, limits, logger).catch(unwind);
  const host = options.listen.slice(0, options.listen.lastIndexOf(":"));
  // Without --advertise, other brokers and `cluster status` see the listener's real port.
  if (cluster !== undefined && options.postgres?.advertisedAddress === undefined) {
    self.address = `${host}:${port}`;
    await cluster
      .advertise(self.address)
      .catch((error: unknown) => logger.warn("cannot record the advertised address", { error }));
  }
  if (options.queues !== undefined && cluster !== undefined)
    await applyQueueFile(options.queues, handlers, logger, clusterApplyAttempts, options.signal).catch(unwind);
  return {
    address: `${host}:${port}`,
    port,
    metricsAddress: metricsServer?.address,
    sqsAddress: sqs?.address,
    sqsUrl: sqs?.baseUrl,
    consoleUrl: consoleListener?.url,
    broker,
    store,
    cluster,
    metrics: metrics.registry,
    health,
    async reloadAuth() {
      if (keyring === undefined) return reloadAuthFile(gate, logger);
      // One SIGHUP reloads both files; a broker may have either or both.
      const [tokens, keys] = await Promise.all([
        gate === undefined || reloadAuthFile(gate, logger),
        reloadSqsCredentials(keyring, logger),
      ]);
      return tokens && keys;
    },
    async shutdown() {
      // Probes see NOT_SERVING (and /readyz 503) for the whole drain, and Watch calls end.
      health.shutdown();
      // Waiting receives answer empty now, so the graceful shutdown need not wait out their polls.
      broker.close();
      await Promise.all([gracefulShutdown(server), sqs?.close(), consoleListener?.close()]);
      peers.close();
      // A reopen under way must end, and none start, before the store closes.
      await recovery.stop();
      // A dead-letter move half done must finish before the store closes.
      await broker.settled();
      await store.close();
      await metricsServer?.close();
    },
  };
}

/** Starts the SQS endpoint on the broker's QueueService handlers, with the gRPC listener's TLS. */
function startSqs(
  endpoint: SqsEndpoint,
  options: HoldshelfServerOptions,
  handlers: QueueHandlers,
  keyring: SqsKeyring | undefined,
  limits: HoldshelfLimits,
  metrics: ReturnType<typeof createHoldshelfMetrics>,
  logger: Logger,
): Promise<SqsListener> {
  metrics.sqs.preRegister(Object.keys(sqsActions));
  return startSqsListener({
    listen: endpoint.listen,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    // With access keys, each call proves the signer's permissions, as a gRPC call proves its token's.
    handlers: keyring === undefined ? handlers : authorizeQueueService(handlers, signerOf),
    ...(keyring === undefined ? {} : { authenticate: (request, nowMs) => verifySignature(request, keyring, nowMs) }),
    accountId: endpoint.accountId,
    region: endpoint.region,
    ...(endpoint.advertisedUrl === undefined ? {} : { advertisedUrl: endpoint.advertisedUrl }),
    // An SQS request carries at most 1 MiB of messages: up to 3 times that once form-encoded as
    // text, 4 times as a Binary attribute (base64 whose "+" and "/" are percent-encoded). With room
    // for the parameters' names, a body past 4 MiB + 64 KiB is no SQS request, whatever gRPC's limit is.
    maxRequestBytes: Math.min(limits.maxRequestBytes, maxSqsRequestBytes),
    metrics: metrics.sqs,
    logger,
    clock: options.clock ?? systemClock,
  });
}

/** Starts the admin console on the broker's QueueService handlers, with the gRPC listener's TLS and tokens. */
async function startConsole(
  listen: string,
  options: HoldshelfServerOptions,
  handlers: QueueHandlers,
  gate: AuthGate | undefined,
  history: QueueHistory,
  limits: HoldshelfLimits,
  logger: Logger,
): Promise<ConsoleListener> {
  const assetsDir = builtAssetsDir();
  if (assetsDir === undefined)
    logger.warn("the console's files are not built: run `npm run build`; the console answers 503 until then");
  return startConsoleListener({
    listen,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    handlers,
    ...(gate === undefined ? {} : { gate }),
    assets: assetsDir === undefined ? undefined : await loadAssets(assetsDir),
    history,
    // A test message is at most a queue's largest message, well under this.
    maxRequestBytes: Math.min(limits.maxRequestBytes, maxConsoleRequestBytes),
    logger,
    clock: options.clock ?? systemClock,
  });
}

/** The principal the SQS listener found by a call's signature; a call without one is a bug, never let through. */
function signerOf(context: CallContext): Principal {
  if (context.caller === undefined) throw new Error("an SQS call reached the broker without a checked signature");
  return context.caller;
}

function bind(server: Server, address: string, tls: ServerTls | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, serverCredentials(tls), (error, port) => {
      if (error) return reject(new Error(`cannot listen on ${address}: ${error.message}`, { cause: error }));
      try {
        raiseReceiveWindows(server);
        resolve(port);
      } catch (windowError) {
        // Inside grpc-js's callback a throw would be lost, and the start would never end.
        reject(windowError);
      }
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
