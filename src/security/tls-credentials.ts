import { ServerCredentials } from "@grpc/grpc-js";
import type { ServerTls } from "../net/server-tls.js";

/** The gRPC listener's credentials: plaintext without TLS, TLS, or mutual TLS when there is a client CA. */
export function serverCredentials(tls: ServerTls | undefined): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const pair = [{ cert_chain: tls.cert, private_key: tls.key }];
  // checkClientCertificate makes grpc-js's TLS server require a certificate and reject one the CA did not issue.
  return tls.clientCa === undefined
    ? ServerCredentials.createSsl(null, pair, false)
    : ServerCredentials.createSsl(tls.clientCa, pair, true);
}

/** How a listener is secured, for the start log line: "off", "tls" or "mutual". */
export function tlsMode(tls: ServerTls | undefined): "off" | "tls" | "mutual" {
  if (tls === undefined) return "off";
  return tls.clientCa === undefined ? "tls" : "mutual";
}
