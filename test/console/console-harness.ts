import { writeFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { HistoryShape } from "../../src/console/queue-history.js";
import type { Logger } from "../../src/logging/logger.js";
import type { Clock } from "../../src/time/clock.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { authFileText, type TestToken } from "../security/auth-harness.js";
import { makeTempDir } from "../support/temp-dir.js";

/** An answer of the console's API: its status and JSON body. */
export interface ApiAnswer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the JSON answer of the call it made
  readonly body: any;
  readonly headers: Headers;
}

/** A browser's view of the console: one cookie jar, and the session's CSRF token once read. */
export class ConsoleBrowser {
  private cookie: string | undefined;
  csrfToken: string | undefined;

  constructor(readonly baseUrl: string) {}

  /** Calls the API as the page does: the session cookie, JSON bodies and the CSRF header on changes. */
  async api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: {
        ...(this.cookie === undefined ? {} : { cookie: this.cookie }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(method !== "GET" && this.csrfToken !== undefined ? { "x-holdshelf-csrf": this.csrfToken } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie !== null) {
      const pair = setCookie.split(";")[0]!;
      this.cookie = pair.endsWith("=") ? undefined : pair;
    }
    const text = await response.text();
    const answer = {
      status: response.status,
      body: text === "" ? undefined : JSON.parse(text),
      headers: response.headers,
    };
    if (typeof answer.body?.csrfToken === "string") this.csrfToken = answer.body.csrfToken;
    return answer;
  }

  /** Opens the session (GET /api/session), as the page does when it loads. */
  session(): Promise<ApiAnswer> {
    return this.api("GET", "/api/session");
  }

  signIn(token: string): Promise<ApiAnswer> {
    return this.api("POST", "/api/session", { token });
  }
}

/** A real broker serving the console on a free loopback port, a gRPC client of it, and its auth file if any. */
export interface ConsoleHarness {
  readonly server: HoldshelfServer;
  readonly consoleUrl: string;
  /** A gRPC client (with `token`, if given). */
  rpc(token?: string): QueueServiceRpc;
  browser(): ConsoleBrowser;
  /** Replaces the auth file's tokens and reloads them. */
  writeTokens(tokens: TestToken[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startConsoleHarness(
  options: { tokens?: TestToken[]; clock?: Clock; history?: HistoryShape; logger?: Logger } = {},
): Promise<ConsoleHarness> {
  const dir = await makeTempDir();
  const authFile = join(dir.path, "auth.json");
  if (options.tokens !== undefined) await writeFile(authFile, authFileText(options.tokens));
  const server = await startHoldshelfServer({
    dataDir: join(dir.path, "data"),
    listen: "127.0.0.1:0",
    consoleListen: "127.0.0.1:0",
    ...(options.tokens === undefined ? {} : { authFile }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.history === undefined ? {} : { consoleHistory: options.history }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const clients: { close(): void }[] = [];
  return {
    server,
    consoleUrl: server.consoleUrl!,
    rpc(token) {
      const client = createQueueServiceRpc(server.address, token === undefined ? {} : { token });
      clients.push(client);
      return client;
    },
    browser: () => new ConsoleBrowser(server.consoleUrl!),
    async writeTokens(tokens) {
      await writeFile(authFile, authFileText(tokens));
      if (!(await server.reloadAuth())) throw new Error("the auth file did not reload");
    },
    async stop() {
      for (const client of clients) client.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}

/** A GET with a Host header of our choosing, which fetch does not let a caller set. */
export function getWithHost(baseUrl: string, path: string, host: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request({ hostname, port, path, headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString("utf8") }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}
