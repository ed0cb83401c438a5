// Hostile HTTP against the admin console (src/console/), sent as raw bytes:
// any method, path (percent-encoding good and bad, dots, very long
// segments, unicode), query and content type; bodies that are broken JSON,
// invalid UTF-8, deeply nested, near and over the size limit, or of the
// wrong type in every field of every route; with and without the session
// cookie, the CSRF header and an allowed Host. Each must be answered in
// time with the console's JSON error and a stable reason (4xx), or 200 for
// a valid read; the broker must log no unexpected error, keep serving the
// console and gRPC, and change nothing it stores (over gRPC and byte for
// byte in LevelDB). Paths outside /api/ serve only dist/console's files.
// Reproduce a failure with HOLDSHELF_FC_SEED=<seed>.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { toJson } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeduplicationScope, QueueSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { createLogger, type Logger } from "../../src/logging/logger.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { authFileText, makeToken } from "../security/auth-harness.js";
import { makeTempDir } from "../support/temp-dir.js";
import { brokerSnapshot } from "./broker-snapshot.js";
import {
  anyJson,
  apiPaths,
  bodies,
  contentTypes,
  credentials,
  foreignHosts,
  fzAConfig,
  fzFConfig,
  junkMethods,
  methods,
  mistypedBodies,
  seededQueues,
  unknownMessageId,
  staticPaths,
  type Credentials,
} from "./console-fuzz-arbitraries.js";
import {
  isOwnHost,
  isParserRefusal,
  readConsoleError,
  routedPath,
  type ConsoleErrorAnswer,
} from "./console-fuzz-judge.js";
import { nestedJson } from "./sqs-fuzz-arbitraries.js";
import { exchange, openSocket, parseAnswer, type RawAnswer, type RawRequest } from "./sqs-fuzz-wire.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20261204);
// A few hundred requests per property: the whole file stays well under 30 s on a loaded 2-core machine.
const numRuns = Number(process.env["HOLDSHELF_FC_RUNS"] ?? 200);
const fcOptions = { seed, numRuns, endOnFailure: true } as const;

const mib = 1024 * 1024;
// The console's body limit: maxConsoleRequestBytes in src/server/holdshelf-server.ts.
const bodyLimit = 4 * mib;
// An answer slower than this is a hang: a request's read and one broker call take milliseconds.
const answerTimeoutMs = 5_000;
const jsonType = "application/json; charset=utf-8";
const builtDir = fileURLToPath(new URL("../../dist/console/", import.meta.url));

/** A broker with its console on loopback ports, its gRPC client, and where it keeps its data. */
interface ConsoleBroker {
  readonly server: HoldshelfServer;
  /** The console's base URL, http://127.0.0.1:<port>/. */
  readonly endpoint: string;
  readonly rpc: QueueServiceRpc & { close(): void };
  stop(): Promise<void>;
}

/** Starts a broker on a temporary data directory, requiring the tokens of `authFile` (its text) if given. */
async function startConsoleBroker(logger: Logger, authFile?: string): Promise<ConsoleBroker> {
  const dir = await makeTempDir();
  const authPath = join(dir.path, "auth.json");
  if (authFile !== undefined) await writeFile(authPath, authFile);
  const server = await startHoldshelfServer({
    dataDir: join(dir.path, "data"),
    listen: "127.0.0.1:0",
    consoleListen: "127.0.0.1:0",
    logger,
    ...(authFile === undefined ? {} : { authFile: authPath }),
  });
  const rpc = createQueueServiceRpc(server.address);
  return {
    server,
    endpoint: server.consoleUrl!,
    rpc,
    async stop() {
      rpc.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}

/** A session's cookie value and CSRF token. */
interface Session {
  readonly cookie: string;
  readonly csrf: string;
}

/** Opens a session as the page does, GET /api/session, and reads its cookie and CSRF token. */
async function openSession(
  endpoint: string,
  extra: RawRequest["headers"] = [],
  method = "GET",
  body?: string,
): Promise<Session> {
  const answer = await exchange(
    endpoint,
    { method, path: "/api/session", headers: extra, ...(body === undefined ? {} : { body }) },
    answerTimeoutMs,
  );
  const cookie = /^holdshelf_console=([\w-]+);/.exec(answer.headers["set-cookie"] ?? "")?.[1];
  const csrf = (JSON.parse(answer.text) as { csrfToken?: string }).csrfToken;
  if (answer.status !== 200 || cookie === undefined || csrf === undefined)
    throw new Error(`no session: ${answer.status} ${answer.text}`);
  return { cookie, csrf };
}

/** A request as the fuzzers make it: the session presented as `credentials` says. */
interface ConsoleRequest {
  readonly method: string;
  readonly path: string;
  readonly contentTypes: readonly string[];
  readonly credentials: Credentials;
  readonly body?: Buffer | undefined;
}

const validCredentials: Credentials = { cookie: "valid", csrf: "valid", fetchSite: "none" };

function rawRequest(request: ConsoleRequest, session: Session): RawRequest {
  const { cookie, csrf, fetchSite } = request.credentials;
  const headers: [string, string][] = [];
  const cookies = {
    valid: [session.cookie],
    none: [],
    bogus: ["A".repeat(43)],
    empty: [""],
    twice: ["A".repeat(43), session.cookie],
  }[cookie];
  if (cookies.length > 0) headers.push(["Cookie", cookies.map((value) => `holdshelf_console=${value}`).join("; ")]);
  const wrong = (session.csrf[0] === "A" ? "B" : "A") + session.csrf.slice(1);
  // Node joins a repeated header's values with ", ", and trims a value's spaces: "padded" is the token itself.
  const csrfValues = {
    valid: [session.csrf],
    none: [],
    wrong: [wrong],
    empty: [""],
    repeated: [session.csrf, session.csrf],
    padded: [`  ${session.csrf}\t`],
  }[csrf];
  for (const value of csrfValues) headers.push(["X-Holdshelf-Csrf", value]);
  if (fetchSite !== "none") headers.push(["Sec-Fetch-Site", fetchSite]);
  for (const type of request.contentTypes) headers.push(["Content-Type", type]);
  return {
    method: request.method,
    path: request.path,
    headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  };
}

/** Whether `request` could be a valid change: a change with the session's cookie and CSRF token, aimed at a seeded queue, or creating a named queue. */
function mayChange(request: ConsoleRequest): boolean {
  const { cookie, csrf, fetchSite } = request.credentials;
  if (
    !["POST", "PUT", "DELETE"].includes(request.method) ||
    cookie !== "valid" ||
    !(csrf === "valid" || csrf === "padded") ||
    fetchSite === "cross-site"
  )
    return false;
  const [first, name] = routedPath(request.path).segments ?? [];
  if (first !== "queues") return false;
  if (name !== undefined) return (seededQueues as readonly string[]).includes(name);
  try {
    return typeof (JSON.parse(request.body?.toString("utf8") ?? "") as { name?: unknown } | null)?.name === "string";
  } catch {
    return false;
  }
}

/** Every file `npm run build` put in dist/console, by URL path. */
async function builtFiles(): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(builtDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(`/${relative(builtDir, path).split(sep).join("/")}`, await readFile(path));
  }
  return files;
}

/** What is wrong with the answer to a path outside /api/: only a built file (200), 404, or 405 for a method other than GET and HEAD. */
function staticProblem(
  method: string,
  pathname: string,
  answer: RawAnswer,
  files: ReadonlyMap<string, Buffer>,
): string | undefined {
  const show = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.text.slice(0, 200)}`;
  if (method !== "GET" && method !== "HEAD") {
    const error = readConsoleError(answer, method);
    if (typeof error === "string") return error;
    return error.status === 405 && (method === "HEAD" || error.reason === "METHOD_NOT_ALLOWED")
      ? undefined
      : `not 405: ${show}`;
  }
  if (answer.status === 404) {
    if (
      answer.headers["content-type"] !== "text/plain; charset=utf-8" ||
      (method === "GET" && answer.text !== "Not found\n")
    )
      return `a 404 of another form: ${show}`;
    return undefined;
  }
  if (answer.status !== 200) return `status ${answer.status}, not 200 or 404: ${show}`;
  const file = files.get(pathname === "/" ? "/index.html" : pathname);
  if (file === undefined) return `served ${pathname}, which is no file of dist/console: ${show}`;
  if (method === "GET" && !answer.body.equals(file)) return `served other bytes than dist/console${pathname}: ${show}`;
  return undefined;
}

/** A valid read answered: JSON that is no error. */
function readProblem(method: string, answer: RawAnswer): string | undefined {
  const show = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.text.slice(0, 300)}`;
  if (answer.headers["content-type"] !== jsonType) return `a 200 that is not JSON: ${show}`;
  if (method === "HEAD") return undefined;
  const body = JSON.parse(answer.text) as unknown;
  return typeof body === "object" && body !== null && !Array.isArray(body) && !("error" in body)
    ? undefined
    : `a 200 that is no answer: ${show}`;
}

function describeRequest(request: RawRequest): string {
  const body =
    request.body === undefined ? "(none)" : JSON.stringify(Buffer.from(request.body).toString("latin1").slice(0, 400));
  return `${request.method} ${request.path.slice(0, 300)} ${JSON.stringify(request.headers).slice(0, 600)} body ${body}`;
}

describe("a broker without an auth file", () => {
  let broker: ConsoleBroker;
  let session: Session;
  let files: Map<string, Buffer>;
  /** Everything stored when the fuzzing starts. */
  let baseline: { grpc: string; store: string };
  /** Error lines the broker logged: an unexpected error in a request is a bug even when the answer looks right. */
  const logged: string[] = [];
  const prototypeKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort().join();

  beforeAll(async () => {
    files = await builtFiles().catch(() => new Map<string, Buffer>());
    if (!files.has("/index.html")) throw new Error(`${builtDir} holds no built page: run npm run build first`);
    broker = await startConsoleBroker(createLogger({ level: "error", write: (line) => logged.push(line) }));
    const { rpc } = broker;
    await rpc.createQueue({ name: "fz-dlq" });
    await rpc.createQueue({
      name: "fz-a",
      config: {
        visibilityTimeout: { seconds: 45n },
        redrivePolicy: { deadLetterQueue: "fz-dlq", maxReceiveCount: 3 },
        retryPolicy: { minBackoff: { seconds: 1n }, maxBackoff: { seconds: 10n } },
        tags: { team: "fuzz" },
      },
    });
    await rpc.createQueue({ name: "fz-b", config: { maxMessageBytes: 4096 } });
    await rpc.createQueue({
      name: "fz-f.fifo",
      config: { fifo: true, deduplicationScope: DeduplicationScope.MESSAGE_GROUP },
    });
    for (const queue of seededQueues) {
      // A FIFO queue's sends name a group and a deduplication id; a standard queue's name neither.
      const fifo = (i: number) =>
        queue.endsWith(".fifo") ? { messageGroupId: `g-${i % 2}`, deduplicationId: `seed-${i}` } : {};
      for (let i = 0; i < 3; i++)
        await rpc.send({
          queue,
          body: Buffer.from(`${queue} body ${i} \u00e9\u4e2d`),
          attributes: { n: String(i) },
          ...fifo(i),
        });
    }
    // One of fz-a's messages leased for an hour: nothing expires while the test runs.
    expect(
      (await rpc.receive({ queue: "fz-a", maxMessages: 1, visibilityTimeout: { seconds: 3600n } })).messages,
    ).toHaveLength(1);
    // The PUT the mistyped-field property starts from is fz-a's configuration as the console shows it.
    const shown = toJson(QueueSchema, (await rpc.getQueue({ name: "fz-a" })).queue!) as { config: unknown };
    expect(shown.config).toEqual(fzAConfig);
    expect(
      (toJson(QueueSchema, (await rpc.getQueue({ name: "fz-f.fifo" })).queue!) as { config: unknown }).config,
    ).toEqual(fzFConfig);
    session = await openSession(broker.endpoint);
    baseline = await stored();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  afterEach(async () => {
    await expectServing();
    // Judged against the state before this test; the next test is judged against the state after it, so one change is reported once.
    const before = baseline;
    baseline = await stored();
    expect(baseline).toEqual(before);
    expect(Object.getOwnPropertyNames(Object.prototype).sort().join()).toBe(prototypeKeysBefore);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(logged.splice(0)).toEqual([]);
  });

  /** The queues over gRPC (config, counts, times; not the oldest message's age, which grows by itself) and the store's fingerprint. */
  async function stored(): Promise<{ grpc: string; store: string }> {
    const { queues } = await broker.rpc.listQueues({});
    const views = [];
    for (const { name } of queues) {
      const { queue } = await broker.rpc.getQueue({ name });
      const view = toJson(QueueSchema, queue!) as Record<string, Record<string, unknown>>;
      delete view["stats"]?.["oldestMessageAge"];
      views.push(view);
    }
    const peeked = [];
    for (const { name } of queues) peeked.push(await broker.rpc.peekMessages({ queue: name, pageSize: 100 }));
    return {
      grpc: JSON.stringify([views, peeked], (_key, value: unknown) =>
        typeof value === "bigint" ? String(value) : value,
      ),
      store: await brokerSnapshot(broker.server),
    };
  }

  /** The console's queue list and a queue's page, and a gRPC call, still answered. */
  async function expectServing(): Promise<void> {
    const list = await send({ method: "GET", path: "/api/queues", contentTypes: [], credentials: validCredentials });
    expect(list.status, list.text).toBe(200);
    expect((JSON.parse(list.text) as { queues: { name: string }[] }).queues.map((queue) => queue.name)).toEqual([
      "fz-a",
      "fz-b",
      "fz-dlq",
      "fz-f.fifo",
    ]);
    const page = await send({
      method: "GET",
      path: "/api/queues/fz-a",
      contentTypes: [],
      credentials: validCredentials,
    });
    expect(page.status, page.text).toBe(200);
    const { queue } = await broker.rpc.getQueue({ name: "fz-a" }, { deadline: Date.now() + answerTimeoutMs });
    expect(queue?.name).toBe("fz-a");
  }

  /** Sends `request` with this test's session, within the hang timeout; signs in again if it signed the session out. */
  async function send(request: ConsoleRequest): Promise<RawAnswer> {
    const answer = await exchange(broker.endpoint, rawRequest(request, session), answerTimeoutMs);
    if (answer.headers["set-cookie"]?.includes("Max-Age=0") === true) session = await openSession(broker.endpoint);
    return answer;
  }

  /** Sends `request` and fails with the request and answer unless it is refused with the console's error, or is a valid read answered. */
  async function expectAnswered(request: ConsoleRequest, allowParserRefusal = false): Promise<RawAnswer> {
    const answer = await send(request);
    const { pathname, segments } = routedPath(request.path);
    let problem: string | undefined;
    if (allowParserRefusal && isParserRefusal(answer)) problem = undefined;
    else if (!pathname.startsWith("/api/")) problem = staticProblem(request.method, pathname, answer, files);
    else if (answer.status === 200) {
      const isRead = request.method === "GET" || (segments?.length === 1 && segments[0] === "session");
      problem = isRead
        ? readProblem(request.method, answer)
        : `accepted: ${answer.status} ${answer.text.slice(0, 300)}`;
    } else {
      const error = readConsoleError(answer, request.method);
      problem = typeof error === "string" ? error : undefined;
    }
    if (problem !== undefined)
      throw new Error(`${problem}\n  request: ${describeRequest(rawRequest(request, session))}`);
    return answer;
  }

  /** Sends `request` and returns its console error, failing unless it is one. */
  async function expectError(request: ConsoleRequest): Promise<ConsoleErrorAnswer> {
    const answer = await send(request);
    const error = readConsoleError(answer, request.method);
    if (typeof error === "string")
      throw new Error(`${error}\n  request: ${describeRequest(rawRequest(request, session))}`);
    return error;
  }

  const json = (
    method: string,
    path: string,
    body: string | Buffer,
    extra: Partial<ConsoleRequest> = {},
  ): ConsoleRequest => ({
    method,
    path,
    contentTypes: ["application/json"],
    credentials: validCredentials,
    body: Buffer.from(body),
    ...extra,
  });

  describe("the API", () => {
    it("refuses a value of the wrong type in every field of every route with INVALID_ARGUMENT naming the field", async () => {
      await fc.assert(
        fc.asyncProperty(mistypedBodies, async ({ route, field, body }) => {
          const error = await expectError(json(route.method, route.path, JSON.stringify(body)));
          const named = field === "" ? "request" : field.split(".")[0]!;
          const shown = `${route.method} ${route.path} ${JSON.stringify(body).slice(0, 300)} -> ${JSON.stringify(error)}`;
          expect(
            { status: error.status, reason: error.reason, field: error.fields[0]?.field.startsWith(named) },
            shown,
          ).toEqual({ status: 400, reason: "INVALID_ARGUMENT", field: true });
        }),
        fcOptions,
      );
    });

    it("answers any method, path, query, body and content type, with or without the session and its CSRF token, with its error or a valid read", async () => {
      const requests = fc
        .record({ method: methods, path: apiPaths, contentTypes, credentials, body: bodies })
        .filter((request) => !mayChange(request));
      await fc.assert(
        fc.asyncProperty(requests, async (request) => {
          await expectAnswered(request);
        }),
        // The widest property, and the cheapest per run: twice the runs.
        { ...fcOptions, numRuns: numRuns * 2 },
      );
    });

    it("refuses every change without the session's cookie, its CSRF token, or from another site, even a valid one on a seeded queue", async () => {
      const changes = fc.constantFrom<[string, string, unknown]>(
        ["POST", "/api/queues", { name: "fz-new" }],
        ["PUT", "/api/queues/fz-a", { config: {} }],
        ["DELETE", "/api/queues/fz-b", undefined],
        ["POST", "/api/queues/fz-a/purge", {}],
        ["POST", "/api/queues/fz-a/messages", { body: "x" }],
        ["POST", "/api/queues/fz-dlq/move-tasks", {}],
        ["DELETE", `/api/queues/fz-dlq/messages/${unknownMessageId}`, undefined],
        ["POST", `/api/queues/fz-dlq/messages/${unknownMessageId}/move`, {}],
        ["POST", `/api/queues/fz-dlq/messages/${unknownMessageId}/copy`, { body: "x" }],
      );
      const refusing = credentials.filter(
        ({ cookie, csrf, fetchSite }) =>
          cookie !== "valid" || !(csrf === "valid" || csrf === "padded") || fetchSite === "cross-site",
      );
      await fc.assert(
        fc.asyncProperty(changes, refusing, async ([method, path, body], presented) => {
          const request: ConsoleRequest = {
            method,
            path,
            contentTypes: ["application/json"],
            credentials: presented,
            ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
          };
          const error = await expectError(request);
          expect([401, 403], JSON.stringify(error)).toContain(error.status);
          expect(["SESSION_REQUIRED", "CSRF_TOKEN_INVALID"]).toContain(error.reason);
        }),
        fcOptions,
      );
    });

    it("leaves methods its HTTP parser cannot read to Node's own 400", async () => {
      await fc.assert(
        fc.asyncProperty(junkMethods, apiPaths, bodies, async (method, path, body) => {
          await expectAnswered(
            { method, path, contentTypes: ["application/json"], credentials: validCredentials, body },
            true,
          );
        }),
        { ...fcOptions, numRuns: Math.ceil(numRuns / 3) },
      );
    });
  });

  describe("enormous and deep bodies", () => {
    it("a body at the size limit is read; one byte over, announced or chunked, is refused with 413 and its connection closed", async () => {
      const padded = (size: number): Buffer => {
        const head = Buffer.from('{"body":"');
        return Buffer.concat([head, Buffer.alloc(size - head.length - 2, 0x61), Buffer.from('"}')]);
      };
      const atLimit = await expectError(json("POST", "/api/queues/fz-a/messages", padded(bodyLimit)));
      expect(atLimit).toMatchObject({ status: 400, reason: "MESSAGE_TOO_LARGE" });
      const over = await send(json("POST", "/api/queues/fz-a/messages", padded(bodyLimit + 1)));
      expect(readConsoleError(over, "POST")).toMatchObject({ status: 413, reason: "REQUEST_TOO_LARGE" });
      expect(over.headers["connection"]).toBe("close");
      // Announced over the limit and never sent: refused at once.
      const unsent = rawRequest(
        { method: "POST", path: "/api/queues", contentTypes: ["application/json"], credentials: validCredentials },
        session,
      );
      const announced = await exchange(
        broker.endpoint,
        { ...unsent, headers: [...unsent.headers, ["Content-Length", String(5 * 1024 * mib)]] },
        answerTimeoutMs,
      );
      expect(readConsoleError(announced, "POST")).toMatchObject({ status: 413, reason: "REQUEST_TOO_LARGE" });

      // Chunked and never ended: refused once past the limit, without waiting for an end.
      const socket = await openSocket(broker.endpoint);
      const received: Buffer[] = [];
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.on("error", () => undefined);
      const head = [
        "POST /api/queues HTTP/1.1",
        "Host: 127.0.0.1",
        `Cookie: holdshelf_console=${session.cookie}`,
        `X-Holdshelf-Csrf: ${session.csrf}`,
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        "",
        "",
      ];
      socket.write(head.join("\r\n"));
      const piece = Buffer.alloc(64 * 1024, 0x20);
      const answered = () => parseAnswer(Buffer.concat(received)) !== undefined;
      for (let written = 0; written < 2 * bodyLimit && !answered() && !socket.destroyed; written += piece.length) {
        if (
          !socket.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n")]))
        ) {
          await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed, sleep(200)]);
        }
      }
      const deadline = Date.now() + answerTimeoutMs;
      while (!answered() && Date.now() < deadline) await sleep(10);
      const chunked = parseAnswer(Buffer.concat(received));
      expect(chunked && readConsoleError(chunked, "POST")).toMatchObject({ status: 413, reason: "REQUEST_TOO_LARGE" });
      const hung = await Promise.race([closed.then(() => false), sleep(answerTimeoutMs).then(() => true)]);
      socket.destroy();
      expect(hung, "the connection was left open").toBe(false);
    });

    it("deep nesting in every field, and enormous strings, are refused in time", async () => {
      const deep = nestedJson(100_000, "{}");
      const cases: ConsoleRequest[] = [
        json("POST", "/api/queues", `{"name":"fz-new","config":${deep}}`),
        json("POST", "/api/queues", `{"name":${deep}}`),
        json("POST", "/api/queues", `{"name":"fz-new","config":{"tags":${deep}}}`),
        json("PUT", "/api/queues/fz-a", `{"config":{"redrivePolicy":${deep}}}`),
        json("PUT", "/api/queues/fz-a", `{"config":{"retryPolicy":{"minBackoff":${deep}}}}`),
        json("PUT", "/api/queues/fz-a", `{"config":{"visibilityTimeout":${deep}}}`),
        json("POST", "/api/queues/fz-a/messages", `{"body":"x","attributes":${deep}}`),
        json("POST", "/api/queues/fz-a/messages", `{"body":"x","attributes":{"k":${deep}}}`),
        json("POST", "/api/queues/fz-a/messages", `{"body":"x","delaySeconds":${deep}}`),
        json("POST", "/api/queues/fz-dlq/move-tasks", `{"destinationQueue":${deep}}`),
        json("POST", "/api/queues/fz-f.fifo/messages", `{"body":"x","messageGroupId":${deep}}`),
        json("POST", "/api/queues/fz-f.fifo/messages", `{"body":"x","messageGroupId":"g","deduplicationId":${deep}}`),
        json("PUT", "/api/queues/fz-f.fifo", `{"config":{"fifo":true,"deduplicationScope":${deep}}}`),
        json("PUT", "/api/queues/fz-f.fifo", `{"config":{"fifo":true,"contentBasedDeduplication":${deep}}}`),
        json("POST", "/api/move-tasks/cancel", `{"taskHandle":${deep}}`),
        json("POST", "/api/queues", "[".repeat(2 * mib) + "]".repeat(2 * mib)),
        json("POST", "/api/queues", `{"name":${"[".repeat(4 * mib - 10)}`),
        json("POST", "/api/queues", JSON.stringify({ name: "x".repeat(3 * mib) })),
        json(
          "POST",
          "/api/queues",
          JSON.stringify({
            name: "fz-new",
            config: { tags: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, "v"])) },
          }),
        ),
        json(
          "PUT",
          "/api/queues/fz-a",
          JSON.stringify({ config: { ...fzAConfig, tags: { [`${"k".repeat(mib)}`]: "v".repeat(mib) } } }),
        ),
        // 1e400 reads as Infinity: no whole number.
        json("POST", "/api/queues/fz-a/messages", `{"body":"x","delaySeconds":1${"0".repeat(400)}}`),
        json(
          "POST",
          "/api/queues/fz-a/messages",
          JSON.stringify({
            body: "x",
            attributes: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`a${i}`, i % 2 === 0 ? "v" : 1])),
          }),
        ),
        {
          method: "GET",
          path: `/api/queues/fz-a/messages?pageToken=${"A".repeat(12_000)}`,
          contentTypes: [],
          credentials: validCredentials,
        },
      ];
      for (const request of cases) {
        const started = Date.now();
        const error = await expectError(request);
        expect(error.status, `${request.method} ${request.path} ${JSON.stringify(error)}`).toBe(400);
        expect(Date.now() - started, `${request.method} ${request.path}`).toBeLessThan(answerTimeoutMs);
      }
    });
  });

  describe("outside /api/", () => {
    it("serves only the built page's files, and 404 or 405 for anything else, traversal and encoded nulls included", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"),
          staticPaths,
          fc.boolean(),
          async (method, path, withSession) => {
            await expectAnswered({
              method,
              path,
              contentTypes: [],
              credentials: withSession ? validCredentials : { cookie: "none", csrf: "none", fetchSite: "none" },
            });
          },
        ),
        fcOptions,
      );
      // And the built page is served, byte for byte.
      const page = await send({ method: "GET", path: "/", contentTypes: [], credentials: validCredentials });
      expect(page.status).toBe(200);
      expect(page.body.equals(files.get("/index.html")!)).toBe(true);
    });
  });

  describe("the Host check (no auth file)", () => {
    it("answers 421 HOST_NOT_ALLOWED to any Host that is neither localhost nor an IP address, before reading a path, a body or a session", async () => {
      const aimed = fc.constantFrom<[string, string, unknown]>(
        ["GET", "/", undefined],
        ["GET", "/index.html", undefined],
        ["GET", "/../../etc/passwd", undefined],
        ["GET", "/api/session", undefined],
        ["POST", "/api/session", {}],
        ["GET", "/api/queues", undefined],
        ["GET", "/api/queues/fz-a/messages", undefined],
        ["GET", "/api/overview", undefined],
        ["GET", "/api/cluster", undefined],
        ["POST", "/api/queues/fz-a/purge", {}],
        ["PUT", "/api/queues/fz-a", { config: {} }],
        ["DELETE", "/api/queues/fz-b", undefined],
        ["POST", "/api/queues", { name: "fz-new" }],
        ["POST", "/api/queues/fz-a/messages", "{"],
      );
      const hosts = foreignHosts.filter((host) => !isOwnHost(host));
      await fc.assert(
        fc.asyncProperty(hosts, aimed, async (host, [method, path, body]) => {
          const answer = await requestWithHost(method, path, host, body);
          const error = readConsoleError(answer, method);
          expect(
            typeof error === "string" ? error : { status: error.status, reason: error.reason },
            `${method} ${path} Host: ${JSON.stringify(host)}`,
          ).toEqual({ status: 421, reason: "HOST_NOT_ALLOWED" });
        }),
        fcOptions,
      );
      // An empty Host, which node:http will not send: raw.
      const socket = await openSocket(broker.endpoint);
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.on("error", () => undefined);
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.write(
        `POST /api/queues/fz-a/purge HTTP/1.1\r\nHost: \r\nCookie: holdshelf_console=${session.cookie}\r\nX-Holdshelf-Csrf: ${session.csrf}\r\nConnection: close\r\n\r\n`,
      );
      await Promise.race([closed, sleep(answerTimeoutMs)]);
      socket.destroy();
      const empty = parseAnswer(Buffer.concat(received));
      expect(empty && readConsoleError(empty, "POST")).toMatchObject({ status: 421, reason: "HOST_NOT_ALLOWED" });
      // localhost and IP literals, any case or port, are served.
      for (const host of ["localhost", "LOCALHOST:1", "127.0.0.1", "[::1]:8080", "10.1.2.3"]) {
        expect((await requestWithHost("GET", "/api/queues", host, undefined)).status, host).toBe(200);
      }
    });

    /** A request with a Host header of our choosing (fetch will not set one), with the session's cookie and CSRF token. */
    function requestWithHost(method: string, path: string, host: string, body: unknown): Promise<RawAnswer> {
      const { hostname, port } = new URL(broker.endpoint);
      const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const outgoing = httpRequest(
          {
            hostname,
            port,
            method,
            path,
            timeout: answerTimeoutMs,
            headers: {
              host,
              cookie: `holdshelf_console=${session.cookie}`,
              "x-holdshelf-csrf": session.csrf,
              ...(text === undefined
                ? {}
                : { "content-type": "application/json", "content-length": Buffer.byteLength(text) }),
            },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => {
              const bodyBytes = Buffer.concat(chunks);
              resolve({
                status: response.statusCode!,
                headers: singleHeaders(response.headers),
                body: bodyBytes,
                text: bodyBytes.toString("utf8"),
              });
            });
          },
        );
        outgoing.on("timeout", () =>
          outgoing.destroy(new Error(`no answer within ${answerTimeoutMs} ms with Host ${JSON.stringify(host)}`)),
        );
        outgoing.on("error", reject);
        outgoing.end(text);
      });
    }
  });

  describe("known defects", () => {
    // Once a 500: new URL(target, base) read a target starting "//" as a
    // scheme-relative URL whose host could be invalid. Now any target that
    // is no path, or does not parse, is NOT_FOUND, and nothing is logged.
    it("answers a request target starting // (or an absolute URL with a bad host) with a 4xx, and logs nothing", async () => {
      const problems: string[] = [];
      for (const path of ["//", "///", "//[", "//a:99999/", "//%zz/", "http://[/", "http://a:99999/api/queues"]) {
        const answer = await send({ method: "GET", path, contentTypes: [], credentials: validCredentials });
        // A path outside /api/ is the static side's: a plain 404, like any file the build lacks.
        const refused = answer.status >= 400 && answer.status < 500;
        const unexpected = logged.splice(0).filter((line) => line.includes("unexpected error in a console request"));
        if (!refused || unexpected.length > 0)
          problems.push(
            `GET ${path} -> ${answer.status} ${answer.text} (${unexpected.length} unexpected errors logged)`,
          );
      }
      expect(problems).toEqual([]);
    });

    // Once a silent change: the body was decoded leniently, so a byte that
    // is no UTF-8 was stored as U+FFFD. Now it is refused, as the SQS endpoint does.
    it("refuses a JSON body that is no UTF-8 with INVALID_ARGUMENT, and sends nothing", async () => {
      const body = Buffer.concat([Buffer.from('{"body":"bad '), Buffer.from([0xff]), Buffer.from('"}')]);
      try {
        const answer = await send(json("POST", "/api/queues/fz-b/messages", body));
        expect(`${answer.status} ${answer.text}`).toMatch(/^400 .*INVALID_ARGUMENT/);
      } finally {
        // A sent message is this defect's, not the next test's: purge what it sent.
        const { messages } = await broker.rpc.peekMessages({ queue: "fz-b", pageSize: 100 });
        for (const message of messages.filter((m) => Buffer.from(m.body).toString("latin1").startsWith("bad "))) {
          const [leased] = (
            await broker.rpc.receive({ queue: "fz-b", maxMessages: 10, visibilityTimeout: { seconds: 60n } })
          ).messages.filter((m) => m.messageId === message.messageId);
          if (leased !== undefined) await broker.rpc.delete({ queue: "fz-b", receiptHandle: leased.receiptHandle });
        }
        baseline = await stored();
      }
    });
  });

  describe("after the fuzz", () => {
    it("valid requests still work: create, send, browse, update, purge and delete a queue", async () => {
      const ok = async (request: ConsoleRequest): Promise<Record<string, unknown>> => {
        const answer = await send(request);
        expect(answer.status, `${request.method} ${request.path}: ${answer.text}`).toBe(200);
        return JSON.parse(answer.text) as Record<string, unknown>;
      };
      await ok(
        json(
          "POST",
          "/api/queues",
          JSON.stringify({ name: "fz-valid", config: { visibilityTimeout: "10s", tags: { made: "console" } } }),
        ),
      );
      await ok(
        json(
          "POST",
          "/api/queues/fz-valid/messages",
          JSON.stringify({ body: "\u00e9 \u4e2d", attributes: { k: "v" } }),
        ),
      );
      const peeked = await ok({
        method: "GET",
        path: "/api/queues/fz-valid/messages",
        contentTypes: [],
        credentials: validCredentials,
      });
      expect(peeked["messages"]).toEqual([
        expect.objectContaining({ bodyText: "\u00e9 \u4e2d", attributes: { k: "v" } }),
      ]);
      const updated = await ok(
        json("PUT", "/api/queues/fz-valid", JSON.stringify({ config: { visibilityTimeout: "20s" } })),
      );
      expect(updated["queue"]).toMatchObject({ config: { visibilityTimeout: "20s" } });
      expect(await ok(json("POST", "/api/queues/fz-valid/purge", "{}"))).toEqual({ purgedCount: 1 });
      await ok({ method: "DELETE", path: "/api/queues/fz-valid", contentTypes: [], credentials: validCredentials });
      // And a FIFO queue: its sends by group, a duplicate answered with the first, its messages browsed with their sequence numbers.
      await ok(
        json(
          "POST",
          "/api/queues",
          JSON.stringify({ name: "fz-valid.fifo", config: { fifo: true, contentBasedDeduplication: true } }),
        ),
      );
      const first = await ok(
        json("POST", "/api/queues/fz-valid.fifo/messages", JSON.stringify({ body: "one", messageGroupId: "g" })),
      );
      expect(first["sequenceNumber"]).toMatch(/^\d{20}$/);
      expect(
        await ok(
          json("POST", "/api/queues/fz-valid.fifo/messages", JSON.stringify({ body: "one", messageGroupId: "g" })),
        ),
      ).toEqual(first);
      const fifoPage = await ok({
        method: "GET",
        path: "/api/queues/fz-valid.fifo/messages",
        contentTypes: [],
        credentials: validCredentials,
      });
      expect(fifoPage["messages"]).toEqual([
        expect.objectContaining({
          messageId: first["messageId"],
          messageGroupId: "g",
          sequenceNumber: first["sequenceNumber"],
        }),
      ]);
      await ok({
        method: "DELETE",
        path: "/api/queues/fz-valid.fifo",
        contentTypes: [],
        credentials: validCredentials,
      });
      expect((await broker.rpc.listQueues({})).queues.map((queue) => queue.name)).toEqual([
        "fz-a",
        "fz-b",
        "fz-dlq",
        "fz-f.fifo",
      ]);
      // This test's changes were meant: the check after it compares from here.
      baseline = await stored();
    });
  });
});

describe("a broker with an auth file", () => {
  const logged: string[] = [];
  const token = makeToken("fuzz-admin", { queues: "*", allow: ["admin", "send", "receive"] });
  let broker: ConsoleBroker;

  beforeAll(async () => {
    broker = await startConsoleBroker(
      createLogger({ level: "error", write: (line) => logged.push(line) }),
      authFileText([token]),
    );
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it("refuses a sign-in whose token is of the wrong type, empty or unknown, and opens no session", async () => {
    const wrongTokens = fc.oneof(
      // Bodies without a token: any JSON at all.
      anyJson.map((value) => JSON.stringify(value)),
      anyJson.filter((value) => typeof value !== "string").map((value) => JSON.stringify({ token: value })),
      fc
        .string({ maxLength: 80 })
        .filter((text) => text !== token.token)
        .map((text) => JSON.stringify({ token: text })),
      // (Spaces around the token are the gate's to ignore, as a Bearer header's are.)
      fc.constantFrom(
        JSON.stringify({ token: token.token.toUpperCase() }),
        JSON.stringify({ token: [token.token] }),
        JSON.stringify({ Token: token.token }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(wrongTokens, async (body) => {
        const answer = await exchange(
          broker.endpoint,
          { method: "POST", path: "/api/session", headers: [["Content-Type", "application/json"]], body },
          answerTimeoutMs,
        );
        const error = readConsoleError(answer, "POST");
        if (typeof error === "string") throw new Error(`${error}\n  body: ${body.slice(0, 300)}`);
        expect(["400 INVALID_ARGUMENT", "401 TOKEN_INVALID"], body).toContain(`${error.status} ${error.reason}`);
        expect(answer.headers["set-cookie"], body).toBeUndefined();
      }),
      { ...fcOptions, numRuns: Math.ceil(numRuns / 2) },
    );
    // Without a session every route is refused, whatever the Host; with the token's, the API serves.
    const denied = await exchange(
      broker.endpoint,
      { method: "GET", path: "/api/queues", headers: [] },
      answerTimeoutMs,
    );
    expect(readConsoleError(denied, "GET")).toMatchObject({ status: 401, reason: "SESSION_REQUIRED" });
    const signedIn = await openSession(
      broker.endpoint,
      [["Content-Type", "application/json"]],
      "POST",
      JSON.stringify({ token: token.token }),
    );
    const list = await exchange(
      broker.endpoint,
      { method: "GET", path: "/api/queues", headers: [["Cookie", `holdshelf_console=${signedIn.cookie}`]] },
      answerTimeoutMs,
    );
    expect(list.status, list.text).toBe(200);
    expect(logged.splice(0)).toEqual([]);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Node's headers with a repeated one's values joined, as RawAnswer keeps them. */
function singleHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : (value ?? "")]),
  );
}
