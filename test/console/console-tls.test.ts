import type { IncomingMessage } from "node:http";
import { request } from "node:https";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { pem, useTestCerts } from "../security/tls-certs.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";

const missing = missingCommands(["openssl"]);

describe.skipIf(skipWithout(missing))("the console over the gRPC listener's TLS", () => {
  const certs = useTestCerts(missing);
  let server: HoldshelfServer | undefined;
  afterEach(async () => {
    await server?.shutdown();
    server = undefined;
  });
  const start = async (clientCa?: string) => {
    server = await startHoldshelfServer({
      dataDir: join(certs.dir, `data-${Date.now()}-${Math.random()}`),
      listen: "127.0.0.1:0",
      consoleListen: "127.0.0.1:0",
      tls: (await loadServerTls({ certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: clientCa }))!,
    });
    return server.consoleUrl!;
  };

  it("serves HTTPS with the broker's certificate, and marks the session cookie Secure", async () => {
    const url = await start();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    const answer = await get(`${url}api/session`, { ca: await pem(certs.caA) });
    expect(answer.status).toBe(200);
    expect(answer.setCookie).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    // A client that does not trust the broker's CA gets no answer at all.
    await expect(get(`${url}api/session`, { ca: await pem(certs.caB) })).rejects.toThrow();
  });

  it("asks for a client certificate when the broker has a client CA", async () => {
    const url = await start(certs.caA);
    const ca = await pem(certs.caA);
    await expect(get(`${url}api/session`, { ca })).rejects.toThrow();
    const withCertificate = await get(`${url}api/session`, {
      ca,
      cert: await pem(certs.clientACert),
      key: await pem(certs.clientAKey),
    });
    expect(withCertificate.status).toBe(200);
  });
});

/** One GET over HTTPS on a fresh connection; rejects if the handshake fails. */
function get(
  url: string,
  tls: { ca: Buffer; cert?: Buffer; key?: Buffer },
): Promise<{ status: number; setCookie: string | undefined }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { ...tls, agent: false, timeout: 15_000 }, (response: IncomingMessage) => {
      response.resume();
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, setCookie: response.headers["set-cookie"]?.[0] }),
      );
    });
    call.on("timeout", () => call.destroy(new Error("timed out")));
    call.on("error", reject);
    call.end();
  });
}
