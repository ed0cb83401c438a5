import { Server, type ServerCredentials } from "@grpc/grpc-js";
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
import { adminServiceHandlers, type AdminServiceHandlers } from "../service/admin-service-handlers.js";
import { fanOutAdminStatus } from "../grpc/forwarding/admin-status-fan-out.js";
import { brokerStatusOf } from "./broker-status.js";
import { ClassicLevelStore } from "../store/classic-level-store.js";
import { queueServiceHandlers } from "../service/queue-service-handlers.js";
import { queueServiceDefinition } from "../protocol/queue-service-definition.js";
import { addReflectionService } from "../grpc/reflection-service.js";
import { requestFramingInterceptor } from "../grpc/request-framing.js";
import { createStreamLimit } from "../grpc/stream-limit.js";
import { createInternalMetadataGuard } from "../grpc/internal-metadata-guard.js";
import { silentLogger, type Logger } from "../logging/logger.js";
import { createHoldshelfMetrics } from "../metrics/holdshelf-metrics.js";
import { startMetricsServer } from "../metrics/metrics-server.js";
import { peerCredentials } from "../security/peer-credentials.js";
import { peerProof } from "../security/peer-proof.js";
import { serverCredentials } from "../security/tls-credentials.js";
import { reloadingServerCredentials } from "../security/reloading-certificates.js";
import { ServerTlsReload } from "../security/server-tls-reload.js";
import type { ServerTlsFiles } from "../security/tls-files.js";
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
import { InFlightCalls } from "../grpc/in-flight-calls.js";
import { stopGrpcServer } from "../grpc/grpc-stop.js";
import { applyQueueFile, type QueueDefinitionsFile } from "./apply-queue-file.js";
import { sqsActions } from "../sqs/actions/sqs-actions.js";

import { readSqsCredentials, type SqsKeyring } from "../sqs/auth/sqs-credentials.js";
import { verifySignature } from "../sqs/auth/verify-signature.js";
import type { QueueHandlers } from "../service/queue-calls.js";
import { startSqsListener, type SqsListener } from "../sqs/sqs-listener.js";
import { builtAssetsDir, loadAssets } from "../console/console-assets.js";
import { startConsoleListener, type ConsoleListener } from "../console/console-listener.js";
import { QueueHistory, type HistoryShape } from "../console/queue-history.js";
import { startHistorySampling } from "../console/history-sampling.js";
import { listQueueActivityHandler } from "../service/queue-activity-handler.js";

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
  /**
   * The files `tls` was read from: reloadTls (SIGHUP) and changes to them replace it on every
   * listener that serves it, for new connections (certificate rotation). Read once if unset.
   */
  readonly tlsFiles?: ServerTlsFiles;
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
  /**
   * The key the brokers that route to each other share, for their peer proof
   * (src/security/peer-proof.ts); in cluster mode the cluster's own, read from
   * PostgreSQL. Tests that pass a `router` pass one too.
   */
  readonly peerKey?: Uint8Array;
  /** Serve the SQS API too, over HTTP (HTTPS with `tls`); off if unset. */
  readonly sqs?: SqsEndpoint;
  /** Serve the admin console (docs/console.md) on this host:port, over HTTP (HTTPS with `tls`); off if unset. */
  readonly consoleListen?: string;
  /** The history sampling (the console's charts, ListQueueActivity), console or not; its default if unset. Tests sample faster. */
  readonly consoleHistory?: HistoryShape;
  /** Queues to create and update before serving (`serve --queues`, src/server/apply-queues.ts); none if unset. */
  readonly queues?: QueueDefinitionsFile;
  /** How long a shutdown lets calls and requests in flight finish before it cuts them off; 10 s if unset. */
  readonly shutdownGraceMs?: number;
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
  /**
   * Reads the TLS files (`tlsFiles`) again and logs the outcome: new connections to every
   * TLS listener use the new material; a bad file leaves the material in use. Resolves to
   * whether the files are in use (true without TLS files).
   */
  reloadTls(): Promise<boolean>;
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
// Calls still running this long after a shutdown began are cut off, unless told otherwise (--shutdown-grace).
const defaultShutdownGraceMs = 10_000;

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
  const startedAt = Date.now();
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
  // Before the broker: the history counts the broker's events from the start. Every broker keeps
  // one, console or not: ListQueueActivity answers from it, for a console on any broker of a cluster.
  const history = new QueueHistory(options.consoleHistory);
  const broker = await Broker.open({
    store,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    // Storage failures were logged once, when storage went down; work cut off
    // because its queue moved to another broker (cluster mode) is no failure.
    onBackgroundError: (error) => {
      if (!isStorageUnavailable(error) && !isQueueMoving(error)) logger.error("background work failed", { error });
    },
    events: teeEvents(metrics.broker, history),
    limits,
    ...(options.renewalLinger === undefined ? {} : { renewalLinger: options.renewalLinger }),
    ...(cluster === undefined ? {} : { cluster: cluster.clusterQueues }),
  }).catch(unwind);
  metrics.broker.observe(broker);
  history.observe(broker);
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
  // Every broker samples, console or not: ListQueueActivity answers from it, for any broker's console.
  const sampling = startHistorySampling(history, clock, (error) =>
    logger.error("queue activity sample failed", { error }),
  );
  opened.push(() => sampling.stop());
  if (cluster !== undefined) {
    await cluster.start({
      gained: (queues) => broker.adoptQueues(queues),
      releasing: (names, error) => broker.evictQueues(names, error),
      arrived: (arrivals) => broker.takeArrivals(arrivals),
    });
  }
  // Brokers that route to each other prove it on each call; internal metadata from anyone else is dropped.
  const peerKey = options.peerKey ?? cluster?.sharedKey;
  const proof = peerKey === undefined ? undefined : peerProof(peerKey);
  // Counted so that a shutdown knows when the connections left are idle (src/grpc/grpc-stop.ts).
  const inFlight = new InFlightCalls();
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
      inFlight.interceptor,
      // Inside the metrics interceptor, so calls it refuses show in grpc_server_handled_total.
      createStreamLimit(limits.maxStreamsPerConnection),
      // Before any handler or forwarding path reads holdshelf-* keys.
      createInternalMetadataGuard(proof),
      // Callers without a valid token are refused before their request is read (health stays open).
      ...(gate === undefined ? [] : [createTokenCheck(gate)]),
      // Outside the metrics interceptor, so the rewritten status is the one counted.
      requestFramingInterceptor,
    ],
  });
  // Certificate rotation: the listeners serving options.tls, and the calls forwarded to other
  // brokers under mutual TLS, take its files' new material (SIGHUP, or a change of the files).
  const tlsReload =
    options.tls === undefined || options.tlsFiles === undefined
      ? undefined
      : new ServerTlsReload(options.tls, options.tlsFiles, logger);
  if (tlsReload !== undefined) opened.push(() => tlsReload.close());
  // One handler map for every wire: the service's handlers, routed to each queue's
  // owner in cluster mode over gRPC channels to the other brokers.
  const peers = new PeerClients({
    maxRequestBytes: limits.maxRequestBytes,
    credentials: peerCredentials(options.tls, options.peerCa, tlsReload),
    proof,
  });
  const activity = listQueueActivityHandler(history, () => router.self, clock);
  const handlers = routeQueueCalls(queueServiceHandlers(broker, logger, activity), router, peers);
  addQueueService(server, broker, handlers, logger, gate, { router, peers });
  opened.push(
    () => peers.close(),
    () => server.forceShutdown(),
  );
  // Only the embedded store can copy itself; cluster mode's data is PostgreSQL's to back up.
  const backup = store instanceof ClassicLevelStore ? (time: number) => store.backup(time) : undefined;
  const status = {
    broker: brokerStatusOf({
      broker,
      limits,
      storage: cluster === undefined ? "leveldb" : "postgres",
      storageAvailable: () => recovery.available,
      self: () => router.self,
      startedAt,
    }),
    cluster: async () => cluster?.snapshot(),
  };
  const statusPeers = cluster === undefined ? undefined : { selfId: self.nodeId, members: () => cluster.liveMembers() };
  const admin = fanOutAdminStatus(adminServiceHandlers(backup, clock, status), peers, statusPeers);
  addAdminService(server, admin, logger, gate);
  addHealthService(server, health);
  addReflectionService(server, [file_holdshelf_v1_queue_service, file_holdshelf_v1_admin_service]);
  metrics.grpc.preRegister([queueServiceDefinition, adminServiceDefinition, healthServiceDefinition]);
  // The embedded broker applies its queues before it listens, so no client sees it without them. In
  // cluster mode, queues may be other brokers' to create, and they may be starting too: each
  // broker applies once it serves (below), and their applies converge (applyQueues).
  if (options.queues !== undefined && cluster === undefined)
    await applyQueueFile(options.queues, handlers, logger, 1, options.signal).catch(unwind);
  const credentials = tlsReload === undefined ? serverCredentials(options.tls) : reloadingServerCredentials(tlsReload);
  const port = await bind(server, options.listen, credentials).catch(unwind);
  const sqs =
    options.sqs === undefined
      ? undefined
      : await startSqs(options.sqs, options, handlers, keyring, limits, metrics, logger).catch(unwind);
  if (sqs !== undefined) opened.push(() => sqs.close());
  const consoleListener =
    options.consoleListen === undefined
      ? undefined
      : await startConsole(options.consoleListen, options, { handlers, admin }, gate, history, limits, logger).catch(
          unwind,
        );
  if (tlsReload !== undefined) {
    // The metrics listener serves the same material only with --metrics-tls.
    const served = [sqs, consoleListener, options.metricsTls === undefined ? undefined : metricsServer];
    for (const listener of served) if (listener !== undefined) tlsReload.onChange((tls) => listener.reloadTls(tls));
    tlsReload.watch();
  }
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
    reloadTls: () => tlsReload?.reload() ?? Promise.resolve(true),
    async shutdown() {
      // Probes see NOT_SERVING (and /readyz 503) for the whole drain, and Watch calls end.
      health.shutdown();
      tlsReload?.close();
      // Long polls end now with SHUTTING_DOWN, and lease streams are asked to end, so the drain need not wait them out;
      // so do the calls this broker passed on to owners (a forwarded long poll among them).
      broker.close();
      peers.stopCalls();
      sampling.stop();
      const graceMs = options.shutdownGraceMs ?? defaultShutdownGraceMs;
      await Promise.all([
        stopGrpcServer(server, inFlight, graceMs, logger),
        sqs?.close(graceMs),
        consoleListener?.close(graceMs),
      ]);
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
  { handlers, admin }: { handlers: QueueHandlers; admin: AdminServiceHandlers },
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
    admin,
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

function bind(server: Server, address: string, credentials: ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (error, port) => {
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
