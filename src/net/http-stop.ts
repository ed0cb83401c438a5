import type { Server, ServerResponse } from "node:http";

// While a stop waits for requests in flight, the connections that have gone idle meanwhile are closed this often.
const idleSweepMs = 100;

/**
 * Stops an HTTP(S) listener within `graceMs`: it takes no new connections,
 * closes idle keep-alive connections at once, answers the requests in
 * flight, and closes each connection once it is idle; whatever still runs
 * at the grace is cut off. Resolves once every connection is closed.
 */
export function stopHttpServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    // A request that arrives on a kept-alive connection during the stop is answered with "connection: close".
    server.on("request", (_request, response: ServerResponse) => {
      response.shouldKeepAlive = false;
    });
    // A request answered during the stop leaves its connection idle, kept for keepAliveTimeout unless closed.
    const sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
