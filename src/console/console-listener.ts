import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { isIP, type AddressInfo } from "node:net";
import { Metadata } from "@grpc/grpc-js";
import type { AuthGate } from "../auth/auth-gate.js";
import { tokenDigest } from "../auth/bearer-token.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { authorizeQueueService, tokenCaller } from "../service/queue-service-auth.js";
import { authorizeAdminService } from "../service/admin-service-auth.js";
import type { AdminServiceHandlers } from "../service/admin-service-handlers.js";
import { AdminCalls } from "./admin-calls.js";
import type { Logger } from "../logging/logger.js";
import { httpsServerOptions, listenHttp, splitHostPort } from "../net/http-listener.js";
import type { ServerTls } from "../net/server-tls.js";
import { brokerFailure } from "../service/broker-failure.js";
import { QueueCalls, type QueueHandlers } from "../service/queue-calls.js";
import type { Clock } from "../time/clock.js";
import { answerApi } from "./console-api.js";
import type { ConsoleAsset } from "./console-assets.js";
import { ConsoleError, consoleErrors, fieldReasons, toConsoleError } from "./console-error.js";
import { sessionPermissions } from "./console-permissions.js";
import { ConsoleSessions, csrfMatches, type ConsoleSession } from "./console-sessions.js";
import type { QueueHistory } from "./queue-history.js";
import { stopHttpServer } from "../net/http-stop.js";
import { reloadHttpsTls } from "../net/https-reload.js";

/** Options of startConsoleListener. */
export interface ConsoleListenerOptions {
  /** host:port (a bracketed host for IPv6); port 0 picks a free one. */
  readonly listen: string;
  /** Serve HTTPS with this certificate (mutual TLS if it has a client CA); plain HTTP if unset. */
  readonly tls?: ServerTls;
  /** The broker's QueueService handlers, routed to each queue's owner in cluster mode, not yet checking permissions. */
  readonly handlers: QueueHandlers;
  /** The broker's AdminService handlers (their status RPCs), gathered from every member in cluster mode, not yet checking permissions. */
  readonly admin: AdminServiceHandlers;
  /** The auth file's tokens: with it, the console asks for a token and acts with that token's permissions. */
  readonly gate?: AuthGate;
  /** The built UI by URL path; undefined when `npm run build` has not made it. */
  readonly assets: ReadonlyMap<string, ConsoleAsset> | undefined;
  readonly history: QueueHistory;
  /** Request bodies over this many bytes are refused (413). */
  readonly maxRequestBytes: number;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** A running console. */
export interface ConsoleListener {
  /** host:port with the real port. */
  readonly address: string;
  readonly port: number;
  /** The address to open in a browser. */
  readonly url: string;
  /** Stops taking requests and lets running ones finish (cut off after `graceMs`, 10 s if unset). */
  close(graceMs?: number): Promise<void>;
  /** New connections use this TLS material (certificate rotation); open ones keep theirs. */
  reloadTls(tls: ServerTls): void;
}

const sessionCookie = "holdshelf_console";
// A sign-in's body: {"token": "..."}, with room to spare.
const maxSessionRequestBytes = 16 * 1024;
// What a bearer token can be: the characters an HTTP header value carries, without spaces.
const bearerTokenPattern = /^[\x21-\x7e]{1,4096}$/;
const csrfHeader = "x-holdshelf-csrf";
// Every answer: the page loads only its own files, is never framed, and leaks no URL to others.
const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
} as const;
// Request bodies must be UTF-8, as JSON is: this decoder refuses anything else.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
// Requests still running this long after a shutdown began are cut off, unless the broker says otherwise.
const defaultShutdownGraceMs = 10_000;

/**
 * The admin console (docs/console.md): its built page and a JSON API under
 * /api that calls QueueService's handlers as the signed-in token, so every
 * action is checked exactly as the same RPC over gRPC would be.
 */
export async function startConsoleListener(options: ConsoleListenerOptions): Promise<ConsoleListener> {
  const { host, port } = splitHostPort(options.listen);
  const sessions = new ConsoleSessions();
  const { gate, clock } = options;
  const logUnexpected = (error: unknown): void =>
    options.logger.error("unexpected error in a console request", { error });

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    serve(request, response).catch((error: unknown) => {
      const failure = toConsoleError(error, logUnexpected);
      if (!response.headersSent && !response.destroyed) sendJson(response, failure.status, failure.toJson());
      else response.destroy();
    });
  };

  const serve = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = requestUrl(request.url);
    // Without tokens anyone who reaches the port may do anything, so a page of
    // another site must not reach it through a name it rebinds to loopback.
    if (gate === undefined && !isOwnHost(request.headers.host, host))
      throw consoleErrors.hostNotAllowed(request.headers.host ?? "");
    if (!url.pathname.startsWith("/api/")) return serveAsset(url.pathname, request, response);
    // The page's own requests are same-origin; a browser marks any other page's (another port of this host too).
    const fetchSite = request.headers["sec-fetch-site"];
    if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") throw consoleErrors.csrf();
    const segments = url.pathname
      .slice("/api/".length)
      .split("/")
      .map((segment) => decodeSegment(segment));
    const method = request.method ?? "GET";
    const cookieId = cookieValue(request.headers.cookie, sessionCookie);
    if (segments.length === 1 && segments[0] === "session") {
      // A sign-in carries a token and nothing else: a small body, read before any session exists.
      return answerSession(method, await readJsonBody(request, maxSessionRequestBytes), cookieId, request, response);
    }
    // The session and CSRF checks come before the body is read: a stranger gets no buffer of the broker's.
    const session = sessions.find(cookieId, clock.now());
    if (session === undefined) throw consoleErrors.sessionRequired();
    if (method !== "GET" && method !== "HEAD" && !csrfMatches(session, headerValue(request.headers[csrfHeader])))
      throw consoleErrors.csrf();
    const body = await readJsonBody(request, options.maxRequestBytes);
    const abort = new AbortController();
    response.once("close", () => abort.abort());
    try {
      const answer = await answerApi(
        { method, segments, query: url.searchParams, body },
        {
          calls: callsAs(session, abort.signal),
          admin: new AdminCalls(authorizedAdmin, abort.signal, metadataOf(session)),
          history: options.history,
          now: () => clock.now(),
          permissions: sessionPermissions(gate, session),
          // The same line as DiscardMessage's and MoveMessage's (src/service/message-audit.ts).
          audit: (fields) => options.logger.info("message action", { ...fields, caller: session.principal ?? null }),
        },
      );
      sendJson(response, 200, answer);
    } catch (error) {
      // A token taken out of the auth file since sign-in ends its session.
      if (brokerFailure(error)?.reason === "TOKEN_INVALID") {
        sessions.close(session.id);
        throw consoleErrors.sessionRequired("this session's token is no longer valid: sign in again");
      }
      throw error;
    }
  };

  /** The broker's handlers as the session's token: checked here, and again by each queue's owner in cluster mode. */
  const authorized = gate === undefined ? options.handlers : authorizeQueueService(options.handlers, tokenCaller(gate));
  const authorizedAdmin = gate === undefined ? options.admin : authorizeAdminService(options.admin, tokenCaller(gate));
  const metadataOf = (session: ConsoleSession): Metadata => {
    const metadata = new Metadata();
    if (session.token !== undefined) metadata.set("authorization", `Bearer ${session.token}`);
    return metadata;
  };
  const callsAs = (session: ConsoleSession, signal: AbortSignal): QueueCalls =>
    new QueueCalls(authorized, undefined, signal, metadataOf(session));

  const answerSession = (
    method: string,
    body: unknown,
    cookieId: string | undefined,
    request: IncomingMessage,
    response: ServerResponse,
  ): void => {
    const now = clock.now();
    const current = sessions.find(cookieId, now);
    // Without tokens everyone is signed in: a GET or POST opens a session, which only carries the CSRF token.
    const openAnonymous = (): void => {
      const session = sessions.open(now, undefined);
      sendJson(response, 200, sessionJson(gate, session), { "set-cookie": cookieFor(session, secure) });
    };
    if (method === "GET") {
      if (gate !== undefined || current !== undefined) return sendJson(response, 200, sessionJson(gate, current));
      return openAnonymous();
    }
    if (method === "DELETE") {
      if (current === undefined) return sendJson(response, 200, {});
      if (!csrfMatches(current, headerValue(request.headers[csrfHeader]))) throw consoleErrors.csrf();
      sessions.close(current.id);
      return sendJson(
        response,
        200,
        {},
        { "set-cookie": `${sessionCookie}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}` },
      );
    }
    if (method !== "POST") throw consoleErrors.methodNotAllowed();
    if (gate === undefined)
      return current === undefined ? openAnonymous() : sendJson(response, 200, sessionJson(gate, current));
    const token = typeof body === "object" && body !== null ? (body as { token?: unknown }).token : undefined;
    if (typeof token !== "string" || token === "")
      throw consoleErrors.invalid("token", "enter an access token", fieldReasons.required);
    // A token is printable ASCII, as a bearer header carries it; anything else (a pasted newline,
    // a smart quote) is refused here, before it could reach an error message or the log.
    if (!bearerTokenPattern.test(token)) throw new HoldshelfError("TOKEN_INVALID", "the bearer token is not valid");
    // Throws TOKEN_INVALID (401) for a token the auth file does not hold.
    const { principal } = gate.identify(tokenDigest(token));
    if (current !== undefined) sessions.close(current.id);
    const session = sessions.open(now, { token, principal: principal.name });
    sendJson(response, 200, sessionJson(gate, session), { "set-cookie": cookieFor(session, secure) });
  };

  const serveAsset = (path: string, request: IncomingMessage, response: ServerResponse): void => {
    if (request.method !== "GET" && request.method !== "HEAD") throw consoleErrors.methodNotAllowed();
    if (options.assets === undefined) {
      return sendText(
        response,
        503,
        "The console's files are not built: run `npm run build` in the holdshelf checkout, then restart the broker.\n",
      );
    }
    const asset = options.assets.get(path === "/" ? "/index.html" : path);
    if (asset === undefined) return sendText(response, 404, "Not found\n");
    if (request.headers["if-none-match"] === asset.etag) {
      response.writeHead(304, { ...securityHeaders, etag: asset.etag });
      return void response.end();
    }
    response.writeHead(200, {
      ...securityHeaders,
      "content-type": asset.contentType,
      "content-length": asset.body.length,
      etag: asset.etag,
      "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    });
    response.end(request.method === "HEAD" ? undefined : asset.body);
  };

  const secure = options.tls !== undefined;
  const server: Server =
    options.tls === undefined ? createServer(handle) : createHttpsServer(httpsServerOptions(options.tls), handle);
  server.requestTimeout = 60_000;
  await listenHttp(server, host, port, `${options.listen} for the console`);
  const bound = (server.address() as AddressInfo).port;
  const address = `${host.includes(":") ? `[${host}]` : host}:${bound}`;
  return {
    address,
    port: bound,
    url: `${secure ? "https" : "http"}://${address}/`,
    reloadTls: (tls) => reloadHttpsTls(server, tls),
    close: (graceMs = defaultShutdownGraceMs) => stopHttpServer(server, graceMs),
  };
}

function sessionJson(gate: AuthGate | undefined, session: ConsoleSession | undefined): object {
  return {
    authRequired: gate !== undefined,
    signedIn: session !== undefined,
    principal: session?.principal ?? null,
    csrfToken: session?.csrfToken ?? null,
    adminEverywhere: session !== undefined && adminEverywhere(gate, session),
  };
}

/** Whether the session's token is admin on "*"; false once the auth file no longer holds it (its next API call signs it out). */
function adminEverywhere(gate: AuthGate | undefined, session: ConsoleSession): boolean {
  try {
    return sessionPermissions(gate, session).adminEverywhere;
  } catch {
    return false;
  }
}

/** A session cookie: gone when the browser closes, never readable by script, never sent by another site's page. */
function cookieFor(session: ConsoleSession, secure: boolean): string {
  return `${sessionCookie}=${session.id}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** Whether a Host header names this listener by an address, or localhost: never a name that could be rebound. */
function isOwnHost(header: string | undefined, listenHost: string): boolean {
  if (header === undefined) return false;
  const name = header
    .replace(/:\d+$/, "")
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase();
  return name === "localhost" || isIP(name) !== 0 || name === listenHost.toLowerCase();
}

/** The request's path and query; a target that is no path ("//x" parses as a host, "http://…") names nothing here. */
function requestUrl(target: string | undefined): URL {
  if (target === undefined || !target.startsWith("/")) throw consoleErrors.notFound();
  try {
    // Prefixed rather than resolved against a base: a path starting "//" stays a path.
    return new URL(`http://console.invalid${target}`);
  } catch {
    throw consoleErrors.notFound();
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? undefined : value;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw consoleErrors.notFound();
  }
}

/** The request's JSON body, undefined when it has none; a body of another type, too large or malformed is refused. */
async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > limit) throw consoleErrors.tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw consoleErrors.tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ConsoleError) throw error;
    // A client that hangs up mid-body is its own business, not the broker's error (nor a log line).
    throw consoleErrors.invalid("request", "the request body was cut off", fieldReasons.malformed);
  }
  if (size === 0) return undefined;
  // Only JSON: a form post from another site's page, which needs no preflight, never gets in.
  if (!/^application\/json\s*(;|$)/i.test(request.headers["content-type"] ?? ""))
    throw consoleErrors.unsupportedMediaType();
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.concat(chunks));
  } catch {
    // Decoded leniently, a stray byte would be stored as U+FFFD: a silent change of what was sent.
    throw consoleErrors.invalid("request", "the body is not valid UTF-8", fieldReasons.malformed);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw consoleErrors.invalid("request", "the body is not valid JSON", fieldReasons.malformed);
  }
}

function sendJson(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...securityHeaders,
    ...headers,
    // A body too large to read is still on the connection: close it rather than read it.
    ...(status === 413 ? { connection: "close" } : {}),
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  response.end(text);
}

function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    ...securityHeaders,
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}
