import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { parseQueueDefinitions } from "../server/queue-definitions.js";
import { createLogger, logLevels, type LogLevel } from "../logging/logger.js";
import { startHoldshelfServer } from "../server/holdshelf-server.js";
import { tlsMode } from "../security/tls-credentials.js";
import { loadTransportSecurity, tlsFilesOf, transportFlagOptions, type TransportSecurity } from "./tls-serve-flags.js";
import type { Durability } from "../store/classic-level-store.js";
import { FormatTooNewError } from "../store/store-open-error.js";
import { formatTooNewExitStatus } from "./exit-status.js";
import { UsageError } from "./usage-error.js";
import { limitFlagOptions, parseLimitFlags } from "./limit-flags.js";
import { clusterFlagOptions, parseClusterFlags } from "./cluster-flags.js";
import { parseSqsFlags, sqsFlagOptions, sqsOff } from "./sqs-flags.js";
import { consoleFlagOptions, consoleOff, parseConsoleFlags } from "./console-flags.js";
import { parserOptions } from "./option-table.js";
import { armStopDeadline, parseShutdownGrace, storeCloseMarginMs } from "./stop-deadline.js";
import { metricsOff, serveOptionTable } from "./serve-options.js";

/** `holdshelf serve`: runs the broker until SIGINT or SIGTERM. */
export async function serveCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...parserOptions(serveOptionTable, env),
      ...transportFlagOptions(env),
      ...limitFlagOptions(env),
      ...clusterFlagOptions(env),
      ...sqsFlagOptions(env),
      ...consoleFlagOptions(env),
    },
  });
  const postgres = parseClusterFlags(values, values.listen);
  const limits = parseLimitFlags(values);
  const authFile = values["auth-file"];
  // An empty value (say, a secret missing from a template) must not quietly turn tokens off.
  if (authFile === "")
    throw new UsageError("--auth-file (HOLDSHELF_AUTH_FILE) is empty: name the auth file, or unset it");
  const queuesFile = values.queues;
  if (queuesFile === "")
    throw new UsageError("--queues (HOLDSHELF_QUEUES) is empty: name the queue definitions file, or unset it");
  const sqs = parseSqsFlags(values, { authFile, cluster: postgres !== undefined });
  const consoleListen = parseConsoleFlags(values);
  const durability = values.durability;
  if (durability !== "fsync" && durability !== "os") throw new UsageError("--durability is fsync or os");
  const level = values["log-level"] as LogLevel;
  if (!logLevels.includes(level)) throw new UsageError(`--log-level is one of ${logLevels.join(", ")}`);
  const logger = createLogger({ level });
  const metricsListen = values["metrics-listen"];
  const shutdownGraceMs = parseShutdownGrace(values["shutdown-grace"]);
  let server: Awaited<ReturnType<typeof startHoldshelfServer>> | undefined;
  let transport: TransportSecurity;
  // SIGHUP re-reads the auth file and the TLS files. Handled from the start to the very end:
  // its default action would kill the broker mid-start or mid-shutdown.
  const reloadFiles = (): void => {
    const failed = (what: string) => (error: unknown) => logger.error(`${what} reload failed`, { error });
    server?.reloadAuth().catch(failed("auth files"));
    server?.reloadTls().catch(failed("TLS files"));
  };
  process.on("SIGHUP", reloadFiles);
  // SIGINT and SIGTERM are handled from the start too: a standby waits in
  // its start for as long as another broker lives, and must stop cleanly.
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  const startAborted = new AbortController();
  void stopRequested.then(() => startAborted.abort());
  try {
    transport = await loadTransportSecurity(
      values,
      {
        listen: values.listen,
        metricsListen: metricsListen === metricsOff ? undefined : metricsListen,
        // Whether gRPC callers need bearer tokens (--auth-file).
        authenticated: authFile !== undefined,
        sqsListen: sqs.endpoint?.listen,
        // Whether SQS requests must be signed with a configured key (--sqs-credentials).
        sqsAuthenticated: sqs.endpoint?.credentialsFile !== undefined,
        consoleListen,
      },
      logger,
    );
    // Read before the store opens: a bad file is refused with nothing changed.
    const queues =
      queuesFile === undefined
        ? undefined
        : { source: queuesFile, definitions: parseQueueDefinitions(await readFile(queuesFile, "utf8"), queuesFile) };
    if (transport.peerCa !== undefined && postgres === undefined)
      throw new UsageError("--peer-tls-ca is for cluster mode: add --postgres URL");
    server = await startHoldshelfServer({
      ...transport,
      // Certificate rotation reads them again (SIGHUP, or a change of the files).
      ...(transport.tls === undefined ? {} : { tlsFiles: tlsFilesOf(values) }),
      dataDir: values["data-dir"],
      listen: values.listen,
      ...(metricsListen === metricsOff ? {} : { metricsListen }),
      durability: durability satisfies Durability,
      logger,
      ...(authFile === undefined ? {} : { authFile }),
      limits,
      ...(postgres === undefined ? {} : { postgres }),
      ...(sqs.endpoint === undefined ? {} : { sqs: sqs.endpoint }),
      ...(consoleListen === undefined ? {} : { consoleListen }),
      ...(queues === undefined ? {} : { queues }),
      shutdownGraceMs,
      signal: startAborted.signal,
    });
  } catch (error) {
    process.off("SIGHUP", reloadFiles);
    if (startAborted.signal.aborted) {
      logger.info("stopped before serving", { signal: await stopRequested });
      return 0;
    }
    const tooNew = error instanceof FormatTooNewError;
    logger.error("cannot start", {
      reason: error instanceof Error ? error.message : String(error),
      ...(tooNew ? { code: error.code } : {}),
    });
    return tooNew ? formatTooNewExitStatus : 1;
  }
  logger.info("holdshelf listening", {
    address: server.address,
    metricsAddress: server.metricsAddress ?? metricsOff,
    sqsAddress: server.sqsAddress ?? sqsOff,
    ...(sqs.endpoint === undefined
      ? { sqsOffBecause: sqs.offBecause }
      : { sqsUrl: server.sqsUrl, sqsAuth: sqs.endpoint.credentialsFile === undefined ? "off" : "signatures" }),
    console: server.consoleUrl ?? consoleOff,
    ...(postgres === undefined
      ? { dataDir: values["data-dir"], durability }
      : {
          storage: "postgres",
          nodeId: postgres.nodeId,
          postgresHosts: postgres.urls.length,
          ...(postgres.routeOnly === true ? { routeOnly: true } : {}),
        }),
    tls: tlsMode(transport.tls),
    metricsTls: tlsMode(transport.metricsTls),
    auth: authFile === undefined ? "off" : "tokens",
    limits,
  });
  const signal = await stopRequested;
  logger.info("shutting down", { signal, graceMs: shutdownGraceMs });
  armStopDeadline(shutdownGraceMs + storeCloseMarginMs, logger);
  await server.shutdown();
  process.off("SIGHUP", reloadFiles);
  logger.info("stopped");
  return 0;
}
