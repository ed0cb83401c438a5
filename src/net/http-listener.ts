// What the broker's HTTP listeners (metrics and probes, the SQS endpoint) share: their address form, TLS and binding.
import type { Server } from "node:http";
import type { ServerOptions as HttpsServerOptions } from "node:https";
import type { ServerTls } from "./server-tls.js";

/** Splits "host:port" or "[v6host]:port"; throws a clear error for anything else. */
export function splitHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  const port = match === null ? NaN : Number(match[3]);
  if (match === null || port > 65535) throw new Error(`cannot listen on "${address}": expected host:port`);
  return { host: match[1] ?? match[2]!, port };
}

/** An HTTPS server's options from a listener's TLS: mutual when it has a client CA. */
export function httpsServerOptions(tls: ServerTls): HttpsServerOptions {
  const { cert, key, clientCa } = tls;
  // A client certificate is checked in the handshake, so a client without one gets no answer at all.
  return clientCa === undefined
    ? { cert, key }
    : { cert, key, ca: clientCa, requestCert: true, rejectUnauthorized: true };
}

/** Binds `server`; a failure names `what` ("127.0.0.1:9464 for metrics") and the system's code. */
export function listenHttp(server: Server, host: string, port: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${what}: ${error.code ?? error.message}`, { cause: error })),
    );
    server.listen(port, host, () => resolve());
  });
}
