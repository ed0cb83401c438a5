import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { httpsServerOptions, listenHttp, splitHostPort } from "../net/http-listener.js";
import type { ServerTls } from "../net/server-tls.js";
import { reloadHttpsTls } from "../net/https-reload.js";

/** Options of startMetricsServer. */
export interface MetricsServerOptions {
  /** host:port (a bracketed host for IPv6); port 0 picks a free one. */
  readonly listen: string;
  /** Serve HTTPS with this certificate; with a client CA, scrapers must present a certificate it issued. */
  readonly tls?: ServerTls;
  readonly registry: Registry;
  /** Whether the broker takes traffic now: /readyz answers 200 if so, else 503. */
  readonly ready: () => boolean;
  /** Told of a scrape that failed, which answers 500. */
  readonly onScrapeError: (error: unknown) => void;
}

/** The HTTP listener for Prometheus and orchestrator probes. */
export interface MetricsServer {
  /** The address it listens on, with the real port. */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
  /** New connections use this TLS material (certificate rotation); open ones keep theirs. */
  reloadTls(tls: ServerTls): void;
}

/**
 * Serves /metrics (Prometheus text format), /healthz (the process answers:
 * a liveness probe) and /readyz (the store is open and the broker is not
 * shutting down: a readiness probe) over plain HTTP, or HTTPS when given TLS.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { host, port } = splitHostPort(options.listen);
  const handle: RequestListener = (request, response) => {
    route(options, request, response).catch((error: unknown) => {
      options.onScrapeError(error);
      if (!response.headersSent) answer(response, 500, "text/plain", "metrics collection failed\n");
      else response.destroy();
    });
  };
  const server =
    options.tls === undefined ? createServer(handle) : createHttpsServer(httpsServerOptions(options.tls), handle);
  await listenHttp(server, host, port, `${options.listen} for metrics`);
  const bound = (server.address() as AddressInfo).port;
  return {
    reloadTls: (tls) => reloadHttpsTls(server, tls),
    address: `${host.includes(":") ? `[${host}]` : host}:${bound}`,
    port: bound,
    close: () =>
      new Promise((resolve) => {
        // Keep-alive connections from a scraper would hold close() open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function route(options: MetricsServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("allow", "GET, HEAD");
    return answer(response, 405, "text/plain", "method not allowed\n");
  }
  switch (path) {
    case "/metrics":
      return answer(response, 200, options.registry.contentType, await options.registry.metrics());
    case "/healthz":
      return answer(response, 200, "text/plain", "ok\n");
    case "/readyz":
      return options.ready()
        ? answer(response, 200, "text/plain", "ready\n")
        : answer(response, 503, "text/plain", "not ready\n");
    default:
      return answer(response, 404, "text/plain", "not found: try /metrics, /healthz or /readyz\n");
  }
}

function answer(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  response.end(response.req.method === "HEAD" ? undefined : body);
}
