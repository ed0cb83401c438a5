import type { Logger } from "../logging/logger.js";
import { isLoopbackAddress } from "../net/loopback-address.js";
import { allowOpenFlag, checkListenPolicy } from "../security/listen-policy.js";
import { parseCertificate, readTlsFile, TlsConfigError } from "../net/tls-file-checks.js";
import type { ServerTls } from "../net/server-tls.js";
import { loadServerTls, type ServerTlsFiles } from "../security/tls-files.js";
import { parserOptions, type OptionTable } from "./option-table.js";

/** The transport-security options of `holdshelf serve`. */
export const transportOptionTable = {
  "tls-cert": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_TLS_CERT",
    description: "PEM certificate chain: serve gRPC, SQS and the console over TLS (with --tls-key); SIGHUP re-reads it",
  },
  "tls-key": { type: "string", value: "FILE", env: "HOLDSHELF_TLS_KEY", description: "PEM private key of --tls-cert" },
  "tls-client-ca": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_TLS_CLIENT_CA",
    description: "require client certificates issued by this CA (mutual TLS)",
  },
  "peer-tls-ca": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_PEER_TLS_CA",
    description: "cluster mode: the CA of the other brokers' certificates, for forwarded calls",
  },
  "metrics-tls": {
    type: "boolean",
    env: "HOLDSHELF_METRICS_TLS",
    description: "serve /metrics over HTTPS with the same certificate",
  },
  "allow-unauthenticated-network": {
    type: "boolean",
    env: "HOLDSHELF_ALLOW_UNAUTHENTICATED_NETWORK",
    description: "listen beyond loopback without tokens or client certificates",
  },
} as const satisfies OptionTable;

/** The transport-security flags for parseArgs, with their environment variables as defaults. */
export function transportFlagOptions(env: NodeJS.ProcessEnv) {
  return parserOptions(transportOptionTable, env);
}

/** The values parseArgs gives for transportFlagOptions. */
export interface TransportFlagValues {
  readonly "tls-cert"?: string | undefined;
  readonly "tls-key"?: string | undefined;
  readonly "tls-client-ca"?: string | undefined;
  readonly "peer-tls-ca"?: string | undefined;
  readonly "metrics-tls"?: boolean | undefined;
  readonly "allow-unauthenticated-network"?: boolean | undefined;
}

/** The listeners' TLS, as HoldshelfServerOptions takes it. */
export interface TransportSecurity {
  readonly tls?: ServerTls;
  readonly metricsTls?: ServerTls;
  /** Cluster mode: the CA that issued the other brokers' certificates (--peer-tls-ca). */
  readonly peerCa?: Buffer;
}

/** The server's TLS files as the flags name them. */
export function tlsFilesOf(values: TransportFlagValues): ServerTlsFiles {
  return { certFile: values["tls-cert"], keyFile: values["tls-key"], clientCaFile: values["tls-client-ca"] };
}

/**
 * Reads the TLS files and applies the safe-by-default listen rule; throws
 * (TlsConfigError, ListenPolicyError) with a message naming the flag when the
 * broker must not start. Warns of listeners opened on purpose, and of tokens sent in plaintext.
 */
export async function loadTransportSecurity(
  values: TransportFlagValues,
  listeners: {
    listen: string;
    metricsListen: string | undefined;
    authenticated: boolean;
    sqsListen?: string | undefined;
    sqsAuthenticated?: boolean;
    consoleListen?: string | undefined;
  },
  logger: Logger,
): Promise<TransportSecurity> {
  const tls = await loadServerTls(tlsFilesOf(values));
  if (values["metrics-tls"] === true && tls === undefined) {
    throw new TlsConfigError(
      "--metrics-tls needs --tls-cert and --tls-key: the metrics listener uses the same certificate",
    );
  }
  const metricsTls = values["metrics-tls"] === true && listeners.metricsListen !== undefined ? tls : undefined;
  const peerCaFile = values["peer-tls-ca"];
  if (peerCaFile !== undefined && tls === undefined) {
    throw new TlsConfigError(
      "--peer-tls-ca needs --tls-cert and --tls-key: brokers call each other with TLS only when they serve it",
    );
  }
  const peerCa = peerCaFile === undefined ? undefined : await readTlsFile("--peer-tls-ca", peerCaFile);
  if (peerCa !== undefined) parseCertificate("--peer-tls-ca", peerCaFile!, peerCa);
  const open = checkListenPolicy({
    ...listeners,
    grpcClientCertificates: tls?.clientCa !== undefined,
    metricsClientCertificates: metricsTls?.clientCa !== undefined,
    allowUnauthenticatedNetwork: values["allow-unauthenticated-network"] === true,
  });
  if (open.length > 0) {
    logger.warn(`${allowOpenFlag}: listening beyond loopback without authentication`, { addresses: open });
  }
  // Not refused: TLS may end at a proxy or mesh sidecar in front of the broker. But say it.
  // The console takes the same tokens, typed into its sign-in page.
  const plaintext = [listeners.listen, listeners.consoleListen].filter(
    (address) => address !== undefined && !isLoopbackAddress(address),
  );
  if (listeners.authenticated && tls === undefined && plaintext.length > 0) {
    logger.warn(
      "bearer tokens cross the network in plaintext: serve TLS (--tls-cert, --tls-key) or end TLS in front of the broker",
      {
        addresses: plaintext,
      },
    );
  }
  return {
    ...(tls === undefined ? {} : { tls }),
    ...(metricsTls === undefined ? {} : { metricsTls }),
    ...(peerCa === undefined ? {} : { peerCa }),
  };
}
