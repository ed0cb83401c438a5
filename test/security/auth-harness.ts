import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateToken, tokenDigest } from "../../src/auth/bearer-token.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import type { Logger } from "../../src/logging/logger.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { makeTempDir } from "../support/temp-dir.js";

/** One permission of an auth file entry. */
export interface TestGrant {
  queues: string;
  allow: ("admin" | "send" | "receive")[];
}

/** A token for tests: its secret, and the auth file entry that holds its hash. */
export interface TestToken {
  name: string;
  token: string;
  entry: { name: string; sha256: string; permissions: TestGrant[] };
}

/** A new random token with these permissions. */
export function makeToken(name: string, ...permissions: TestGrant[]): TestToken {
  const token = generateToken();
  return { name, token, entry: { name, sha256: tokenDigest(token).toString("hex"), permissions } };
}

/** The text of an auth file holding these tokens. */
export function authFileText(tokens: TestToken[]): string {
  return JSON.stringify({ tokens: tokens.map((t) => t.entry) }, null, 2);
}

/** A real broker on a free loopback port that requires the tokens of an auth file, and clients of it. */
export interface AuthHarness {
  server: HoldshelfServer;
  authFile: string;
  /** A client sending `token` (none if undefined); closed by stop(). */
  client(token?: string): QueueServiceRpc;
  /** Replaces the auth file's tokens (the server sees them after reloadAuth). */
  writeTokens(tokens: TestToken[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts an AuthHarness whose auth file holds `tokens`. */
export async function startAuthHarness(tokens: TestToken[], logger?: Logger): Promise<AuthHarness> {
  const dir = await makeTempDir();
  const authFile = join(dir.path, "auth.json");
  await writeFile(authFile, authFileText(tokens));
  const server = await startHoldshelfServer({
    dataDir: join(dir.path, "data"),
    listen: "127.0.0.1:0",
    authFile,
    ...(logger === undefined ? {} : { logger }),
  });
  const clients: { close(): void }[] = [];
  return {
    server,
    authFile,
    client(token) {
      const rpc = createQueueServiceRpc(server.address, token === undefined ? {} : { token });
      clients.push(rpc);
      return rpc;
    },
    writeTokens: (next) => writeFile(authFile, authFileText(next)),
    async stop() {
      for (const rpc of clients) rpc.close();
      await server.shutdown();
      await dir.remove();
    },
  };
}
