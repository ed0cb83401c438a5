import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "../logging/logger.js";
import type { SqsServerMetrics } from "../metrics/sqs-server-metrics.js";
import { httpsServerOptions, listenHttp, splitHostPort } from "../net/http-listener.js";
import type { ServerTls } from "../net/server-tls.js";
import type { Clock } from "../time/clock.js";
import { actionLabel, sqsActions } from "./actions/sqs-actions.js";
import type { Principal } from "../auth/permissions.js";
import type { SignedRequest } from "./auth/verify-signature.js";
import { toSqsError } from "./holdshelf-errors.js";
import {
  actionOfTarget,
  decodeJsonRequest,
  encodeJsonError,
  encodeJsonResponse,
  isJsonRequest,
  jsonContentType,
} from "./protocol/json-protocol.js";
import { decodeQueryRequest, encodeQueryError, encodeQueryResponse } from "./protocol/query-protocol.js";
import { QueueCalls, type QueueHandlers } from "../service/queue-calls.js";
import { QueueUrls } from "./queue-urls.js";
import { ReceiveAttempts } from "./actions/receive-attempts.js";
import { QueueKinds } from "./actions/queue-kinds.js";
import { type SqsError, sqsErrors } from "./sqs-error.js";
import { stopHttpServer } from "../net/http-stop.js";
import { reloadHttpsTls } from "../net/https-reload.js";

/** Options of startSqsListener. */
export interface SqsListenerOptions {
  /** host:port (a bracketed host for IPv6); port 0 picks a free one. */
  readonly listen: string;
  /** Serve HTTPS with this certificate (mutual TLS if it has a client CA); plain HTTP if unset. */
  readonly tls?: ServerTls;
  /** The broker's QueueService handlers (routed in cluster mode): SQS calls the same ones gRPC does. */
  readonly handlers: QueueHandlers;
  /** Checks each request's signature; without it, any request is taken, signed or not, with every permission. */
  readonly authenticate?: SqsAuthenticator;
  /** The account id of queue URLs and ARNs. */
  readonly accountId: string;
  /** The region of ARNs. */
  readonly region: string;
  /** Where clients reach this listener ("http://queues.example.com:9324"); the listener's own address if unset. */
  readonly advertisedUrl?: string;
  /** Request bodies over this many bytes are refused (413); 64 of them at once are the most the listener holds in memory. */
  readonly maxRequestBytes: number;
  readonly metrics: SqsServerMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** Who signed a request, or an SqsError (MissingAuthenticationToken, SignatureDoesNotMatch, ...) if nobody the broker knows did. */
export type SqsAuthenticator = (request: SignedRequest, nowMs: number) => Principal;

/** A running SQS endpoint. */
export interface SqsListener {
  /** host:port with the real port. */
  readonly address: string;
  readonly port: number;
  /** The start of every queue URL it hands out. */
  readonly baseUrl: string;
  /** Stops taking requests, lets running ones finish (cut off after `graceMs`, 10 s if unset) and closes every connection. */
  close(graceMs?: number): Promise<void>;
  /** New connections use this TLS material (certificate rotation); open ones keep theirs. */
  reloadTls(tls: ServerTls): void;
}

// Requests still running this long after a shutdown began are cut off, unless the broker says otherwise.
const defaultShutdownGraceMs = 10_000;

/** One request's wire: how its answer and errors are written. */
interface Wire {
  answer(response: ServerResponse, action: string, output: Record<string, unknown>, requestId: string): void;
  fail(response: ServerResponse, error: SqsError, requestId: string): void;
}

const jsonWire: Wire = {
  answer(response, _action, output, requestId) {
    send(response, 200, jsonContentType, encodeJsonResponse(output), requestId);
  },
  fail(response, error, requestId) {
    const { body, headers } = encodeJsonError(error);
    send(response, error.httpStatus, jsonContentType, body, requestId, headers);
  },
};

const queryWire: Wire = {
  answer(response, action, output, requestId) {
    send(response, 200, "text/xml", encodeQueryResponse(action, output, requestId), requestId);
  },
  fail(response, error, requestId) {
    send(response, error.httpStatus, "text/xml", encodeQueryError(error, requestId), requestId);
  },
};

/**
 * Serves the SQS API over HTTP(S): both of SQS's wire protocols (JSON 1.0
 * and query, chosen per request as AWS chooses), SigV4 signatures checked
 * against the configured access keys, and each action translated onto
 * QueueService's handlers (src/sqs/actions/).
 */
export async function startSqsListener(options: SqsListenerOptions): Promise<SqsListener> {
  const { host, port } = splitHostPort(options.listen);
  let urls: QueueUrls | undefined;
  const purging = new Set<string>();
  const receiveAttempts = new ReceiveAttempts(options.clock);
  const queueKinds = new QueueKinds();
  const bodies: BodyBudget = { buffered: 0, max: bodyBudgetRequests * options.maxRequestBytes };
  const logUnexpected = (error: unknown): void => options.logger.error("unexpected error in an SQS request", { error });
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const requestId = randomUUID();
    const wire = isJsonRequest(request.headers) ? jsonWire : queryWire;
    // Labelled once the action is known; a request refused before that counts as "unknown".
    let finish: ((code: string) => void) | undefined;
    const begin = (action: string): void => {
      finish = options.metrics.started(actionLabel(action));
    };
    serve(request, response, wire, begin)
      .then((answer) => {
        // Encoding is inside the chain: an answer that cannot be written is an InternalError, not a crash.
        wire.answer(response, answer.action, answer.output, requestId);
        finish?.("OK");
      })
      .catch((error: unknown) => {
        const sqsError = toSqsError(error, logUnexpected);
        (finish ?? options.metrics.started("unknown"))(sqsError.legacyCode);
        if (!response.headersSent && !response.destroyed) wire.fail(response, sqsError, requestId);
      })
      .catch((error: unknown) => {
        logUnexpected(error);
        response.destroy();
      });
  };

  const serve = async (
    request: IncomingMessage,
    response: ServerResponse,
    wire: Wire,
    begin: (action: string) => void,
  ): Promise<{ action: string; output: Record<string, unknown> }> => {
    const body = await readBody(request, options.maxRequestBytes, bodies);
    const target = request.url ?? "/";
    const queryStart = target.indexOf("?");
    const path = queryStart === -1 ? target : target.slice(0, queryStart);
    const rawQuery = queryStart === -1 ? "" : target.slice(queryStart + 1);
    let params: URLSearchParams | undefined;
    if (wire === queryWire) {
      // Old SDKs put the action in the query string, the form body, or both.
      params = new URLSearchParams(rawQuery);
      if (request.method === "POST")
        for (const [key, value] of new URLSearchParams(body.toString("utf8"))) params.append(key, value);
      begin(params.get("Action") ?? "");
    } else {
      begin(actionOfTarget(request.headers["x-amz-target"]));
    }
    // The signature first, as AWS checks it: an unsigned caller learns nothing of the request's faults.
    let caller: Principal | undefined;
    if (options.authenticate !== undefined) {
      // Repeated headers apart: SigV4 joins them with "," where Node's request.headers uses ", ".
      caller = options.authenticate(
        { method: request.method ?? "GET", path, rawQuery, headers: request.headersDistinct, body },
        options.clock.now(),
      );
    }
    const { action, input } =
      params === undefined ? decodeJsonRequest(request.headers, body) : decodeQueryRequest(params);
    const run = sqsActions[action];
    if (run === undefined) throw sqsErrors.invalidAction(action);
    // A long-polling ReceiveMessage takes nothing once its client has gone.
    const abort = new AbortController();
    response.once("close", () => {
      if (!response.writableFinished) abort.abort();
    });
    const output = await run(input, {
      queues: new QueueCalls(options.handlers, caller, abort.signal),
      urls: urls!,
      purging,
      receiveAttempts,
      queueKinds,
      callerName: caller?.name ?? "",
      pathQueue: urls!.queueOfPath(path),
      // One header: repeated ones are no trace header at all.
      traceHeader:
        request.headersDistinct["x-amzn-trace-id"]?.length === 1
          ? request.headersDistinct["x-amzn-trace-id"][0]
          : undefined,
    });
    return { action, output };
  };

  const server: Server =
    options.tls === undefined ? createServer(handle) : createHttpsServer(httpsServerOptions(options.tls), handle);
  // Long polls last up to 20 s; a client's idle keep-alive connection is its own business.
  server.requestTimeout = 60_000;
  await listenHttp(server, host, port, `${options.listen} for SQS`);
  const bound = (server.address() as AddressInfo).port;
  const address = `${host.includes(":") ? `[${host}]` : host}:${bound}`;
  const baseUrl = (options.advertisedUrl ?? `${options.tls === undefined ? "http" : "https"}://${address}`).replace(
    /\/+$/,
    "",
  );
  urls = new QueueUrls({ baseUrl, accountId: options.accountId, region: options.region });
  return {
    address,
    port: bound,
    baseUrl,
    // As gRPC's shutdown: requests running finish (the broker has already ended
    // long polls), idle keep-alive connections close now, and stragglers are cut off after a grace.
    close: (graceMs = defaultShutdownGraceMs) => stopHttpServer(server, graceMs),
    reloadTls: (tls) => reloadHttpsTls(server, tls),
  };
}

/** Bytes of request bodies held in memory at once, over all requests: bodies are read whole before their signature is checked. */
interface BodyBudget {
  buffered: number;
  readonly max: number;
}

// The budget holds this many largest bodies: beyond it, requests wait for none of it and get a 503.
const bodyBudgetRequests = 64;

/**
 * The request body, or RequestEntityTooLarge once it passes `limit` bytes
 * (the rest is not read), or ServiceUnavailable when all requests together
 * hold the budget's bytes already.
 */
function readBody(request: IncomingMessage, limit: number, budget: BodyBudget): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"]);
    if (declared > limit) return reject(sqsErrors.requestTooLarge(limit));
    const chunks: Buffer[] = [];
    let size = 0;
    const release = (): void => {
      budget.buffered -= size;
      size = 0;
    };
    const refuse = (error: Error): void => {
      request.removeAllListeners("data");
      request.pause();
      release();
      reject(error);
    };
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      budget.buffered += chunk.length;
      if (size > limit) return refuse(sqsErrors.requestTooLarge(limit));
      if (budget.buffered > budget.max)
        return refuse(
          sqsErrors.serviceUnavailable("The broker is reading too many request bodies at once; retry shortly."),
        );
      chunks.push(chunk);
    });
    request.once("end", () => {
      release();
      resolve(Buffer.concat(chunks));
    });
    // A client that hangs up mid-body, or sends a broken chunked body, is the client's
    // fault, not the broker's: no "unexpected error" log, no InternalError count.
    request.once("error", () => {
      release();
      reject(sqsErrors.malformedRequest("The request body was cut off or malformed."));
    });
  });
}

function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...headers,
    // The rest of a body too large to read is still on the connection: close it rather than read it.
    ...(status === 413 ? { connection: "close" } : {}),
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "x-amzn-requestid": requestId,
  });
  response.end(body);
}
