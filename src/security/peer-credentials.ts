import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import type { ServerTls } from "../net/server-tls.js";
import { reloadingPeerCredentials } from "./reloading-certificates.js";
import type { ServerTlsReload } from "./server-tls-reload.js";

/**
 * The credentials a broker calls other brokers of its cluster with, when it
 * forwards a call to a queue's owner. Plaintext when its own gRPC listener
 * is (the brokers of a cluster are configured alike); otherwise TLS that
 * trusts `peerCa` (--peer-tls-ca), else the listener's client CA, else the
 * system's roots, and presents the broker's own certificate when its
 * listener asks clients for one (mutual TLS), since the others ask too;
 * with `reload`, the certificate and client CA it reads again.
 */
export function peerCredentials(
  tls: ServerTls | undefined,
  peerCa: Buffer | undefined,
  reload?: ServerTlsReload,
): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  const trusted = peerCa ?? tls.clientCa ?? null;
  if (tls.clientCa === undefined) return credentials.createSsl(trusted);
  // The certificate it presents rotates with its listener's (certificate rotation, docs/security.md).
  return reload === undefined
    ? credentials.createSsl(trusted, tls.key, tls.cert)
    : reloadingPeerCredentials(reload, peerCa);
}
