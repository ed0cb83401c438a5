// No token or token hash ever reaches a log line or a status message: not
// for calls with wrong, near-miss or malformed tokens, nor for auth files
// that are broken in ways that put a secret where the parser complains.
import { writeFile } from "node:fs/promises";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { InterceptingCall } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { generateToken } from "../../src/auth/bearer-token.js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { createLogger } from "../../src/logging/logger.js";
import { makeToken, startAuthHarness, type AuthHarness } from "./auth-harness.js";

const root = makeToken("root", { queues: "*", allow: ["admin", "send", "receive"] });
const worker = makeToken("orders-worker", { queues: "orders-*", allow: ["send", "receive"] });

describe("secrets in logs and errors", () => {
  let h: AuthHarness;
  let lines: string[];
  afterEach(async () => h.stop());

  it("never shows a token or a hash, whatever the caller or the operator gets wrong", async () => {
    lines = [];
    const logger = createLogger({ level: "debug", write: (line) => lines.push(line) });
    h = await startAuthHarness([root, worker], logger);
    const admin = h.client(root.token);
    await admin.createQueue({ name: "orders-1" });
    await admin.createQueue({ name: "payments" });

    const wrong = generateToken();
    const secrets = [root.token, worker.token, wrong, root.entry.sha256, worker.entry.sha256];
    const messages: string[] = [];
    const refused = async (call: Promise<unknown>) => {
      const error = await call.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RpcError);
      messages.push((error as RpcError).message, JSON.stringify(error));
    };

    // Callers: a wrong token, near misses of a real one, a hash as the token, malformed headers.
    for (const token of [wrong, worker.token.slice(0, -1), `${worker.token}x`, worker.entry.sha256]) {
      await refused(h.client(token).send({ queue: "orders-1", body: Buffer.from("x") }));
    }
    for (const header of [worker.token, `Basic ${worker.token}`, `Bearer ${worker.token} ${wrong}`]) {
      const rpc = createQueueServiceRpc(h.server.address, {
        channelOptions: {
          interceptors: [
            (options, nextCall) =>
              new InterceptingCall(nextCall(options), {
                start(metadata, listener, next) {
                  metadata.set("authorization", header);
                  next(metadata, listener);
                },
              }),
          ],
        },
      });
      await refused(rpc.listQueues({}));
      rpc.close();
    }
    const asWorker = h.client(worker.token);
    await refused(asWorker.send({ queue: "payments", body: Buffer.from("x") }));
    await refused(asWorker.getQueue({ name: "payments" }));
    await refused(asWorker.receive({ queue: "payments", visibilityTimeout: durationFromMs(1_000) }));

    // Operators: files that put a secret where the parser stops, then a good one.
    const bad = [
      `{"tokens": [${wrong}]}`,
      `{"tokens": [{"name": "w", "sha256": "${wrong}", "permissions": []}]}`,
      JSON.stringify({ tokens: [{ ...worker.entry, [wrong]: true }] }),
      JSON.stringify({ tokens: [worker.entry, { ...worker.entry, name: "twin" }] }),
      JSON.stringify({ tokens: [{ ...worker.entry, name: wrong }] }),
      JSON.stringify({
        tokens: [{ ...worker.entry, permissions: [{ queues: wrong.replace("_", "."), allow: [wrong] }] }],
      }),
    ];
    for (const text of bad) {
      await writeFile(h.authFile, text);
      expect(await h.server.reloadAuth()).toBe(false);
    }
    await h.writeTokens([root]);
    expect(await h.server.reloadAuth()).toBe(true);
    await refused(asWorker.listQueues({}));

    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.filter((line) => line.msg === "auth file reload failed; keeping the tokens in use")).toHaveLength(
      bad.length,
    );
    expect(logged.filter((line) => line.msg === "auth file reloaded")).toEqual([
      expect.objectContaining({ tokens: 1, level: "info" }),
    ]);
    expect(logged.find((line) => line.msg === "auth file loaded")).toMatchObject({ tokens: 2, path: h.authFile });
    for (const secret of secrets) {
      for (const text of [...lines, ...messages]) expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
      // Not a recognizable piece of one either.
      for (const text of [...lines, ...messages]) expect(text).not.toContain(secret.slice(3, 19));
    }
    expect(messages.length).toBeGreaterThan(20);
  });
});
