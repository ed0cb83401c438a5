import type { Server } from "node:http";
import { Server as HttpsServer } from "node:https";
import type { ServerTls } from "./server-tls.js";

/**
 * Gives an HTTPS listener's new connections new TLS material (certificate
 * rotation); open connections keep theirs. A plain HTTP listener has none to change.
 */
export function reloadHttpsTls(server: Server, tls: ServerTls): void {
  if (!(server instanceof HttpsServer)) return;
  // Whether client certificates are asked for is the listener's, set at start; only the CA they are checked against changes.
  server.setSecureContext({
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa }),
  });
}
