import { credentials, status, type ChannelCredentials } from "@grpc/grpc-js";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { QueueClient } from "../../src/client/queue-client.js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { startHoldshelfServer, type HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { loadClientCredentials } from "../../src/client/load-client-credentials.js";
import { TlsConfigError } from "../../src/net/tls-file-checks.js";
import type { ServerTls } from "../../src/net/server-tls.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { pem, useTestCerts } from "./tls-certs.js";

const missing = missingCommands(["openssl"]);

describe.skipIf(skipWithout(missing))("TLS on the gRPC and metrics listeners", () => {
  const certs = useTestCerts(missing);
  let server: HoldshelfServer | undefined;
  const clients: { close(): void }[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await server?.shutdown();
    server = undefined;
  });

  const start = async (tls: ServerTls, metricsTls?: ServerTls) => {
    server = await startHoldshelfServer({
      dataDir: join(certs.dir, `data-${Date.now()}-${Math.random()}`),
      listen: "127.0.0.1:0",
      metricsListen: "127.0.0.1:0",
      tls,
      ...(metricsTls === undefined ? {} : { metricsTls }),
    });
    return server;
  };
  const serverTls = (clientCa?: string) =>
    loadServerTls({ certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: clientCa });
  const client = (address: string, channel: ChannelCredentials) => {
    const queueClient = new QueueClient(address, { credentials: channel });
    clients.push(queueClient);
    return queueClient;
  };
  // A real Send and Receive: the whole path, not just the handshake.
  const roundTrip = async (queueClient: QueueClient) => {
    await queueClient.createQueue("secure");
    const messageId = await queueClient.send("secure", "over tls");
    const [message] = await queueClient.receive("secure", { waitTimeMs: 1000 });
    expect(message?.messageId).toBe(messageId);
    expect(Buffer.from(message!.body).toString()).toBe("over tls");
  };
  // A call that cannot get through the handshake fails fast with UNAVAILABLE, not at its deadline.
  const expectRefused = async (address: string, channel: ChannelCredentials) => {
    const rpc = createQueueServiceRpc(address, { credentials: channel });
    clients.push(rpc);
    const error = await rpc.listQueues({}, { deadline: Date.now() + 15_000 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe(status.UNAVAILABLE);
  };

  it("serves a client that trusts the server's CA", async () => {
    const { address } = await start((await serverTls())!);
    await roundTrip(client(address, (await loadClientCredentials({ caFile: certs.caA }))!));
  });

  it("serves the same client by name (localhost) as by IP: the certificate names both", async () => {
    const { port } = await start((await serverTls())!);
    await roundTrip(client(`localhost:${port}`, credentials.createSsl(await pem(certs.caA))));
  });

  it("refuses a plaintext client, and a client that does not trust the server's CA", async () => {
    const { address } = await start((await serverTls())!);
    await expectRefused(address, credentials.createInsecure());
    await expectRefused(address, credentials.createSsl(await pem(certs.caB)));
  });

  it("with a client CA, refuses a client with no certificate or one from another CA, and serves one from that CA", async () => {
    const { address } = await start((await serverTls(certs.caA))!);
    const caA = await pem(certs.caA);
    await expectRefused(address, credentials.createSsl(caA));
    await expectRefused(address, credentials.createSsl(caA, await pem(certs.clientBKey), await pem(certs.clientBCert)));
    await roundTrip(
      client(
        address,
        (await loadClientCredentials({ caFile: certs.caA, certFile: certs.clientACert, keyFile: certs.clientAKey }))!,
      ),
    );
  });

  it("serves metrics over HTTPS with the same certificate, and not over plain HTTP", async () => {
    const tls = (await serverTls())!;
    const { metricsAddress } = await start(tls, tls);
    const scraped = await get(`https://${metricsAddress}/metrics`, { ca: await pem(certs.caA) });
    expect(scraped.status).toBe(200);
    expect(scraped.body).toContain("holdshelf_");
    expect((await get(`https://${metricsAddress}/readyz`, { ca: await pem(certs.caA) })).status).toBe(200);
    await expect(get(`http://${metricsAddress}/metrics`)).rejects.toThrow();
    // A scraper that does not trust the CA gets no answer either.
    await expect(get(`https://${metricsAddress}/metrics`, { ca: await pem(certs.caB) })).rejects.toThrow();
  });

  it("with a client CA, refuses a scrape without a certificate or with one from another CA", async () => {
    const tls = (await serverTls(certs.caA))!;
    const { metricsAddress } = await start(tls, tls);
    const ca = await pem(certs.caA);
    const url = `https://${metricsAddress}/metrics`;
    await expect(get(url, { ca })).rejects.toThrow();
    await expect(
      get(url, { ca, cert: await pem(certs.clientBCert), key: await pem(certs.clientBKey) }),
    ).rejects.toThrow();
    const scraped = await get(url, { ca, cert: await pem(certs.clientACert), key: await pem(certs.clientAKey) });
    expect(scraped.status).toBe(200);
    expect(scraped.body).toContain("holdshelf_");
  });

  it("explains TLS files that cannot work, naming the flag and never the key", async () => {
    const refusal = async (files: Parameters<typeof loadServerTls>[0]) => {
      const error = await loadServerTls(files).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TlsConfigError);
      const message = (error as Error).message;
      for (const key of certs.keyContents) expect(message).not.toContain(key.split("\n")[1]);
      return message;
    };
    expect(await loadServerTls({})).toBeUndefined();
    expect(await refusal({ certFile: certs.serverCert })).toBe("--tls-cert needs --tls-key");
    expect(await refusal({ keyFile: certs.serverKey })).toBe("--tls-key needs --tls-cert");
    expect(await refusal({ clientCaFile: certs.caA })).toContain("--tls-client-ca needs --tls-cert and --tls-key");
    const absent = join(certs.dir, "absent.key");
    expect(await refusal({ certFile: certs.serverCert, keyFile: absent })).toBe(
      `cannot read --tls-key ${absent}: ENOENT`,
    );
    expect(await refusal({ certFile: certs.serverCert, keyFile: certs.clientAKey })).toBe(
      `--tls-key ${certs.clientAKey} is not the private key of the certificate in --tls-cert ${certs.serverCert}`,
    );
    expect(await refusal({ certFile: certs.serverKey, keyFile: certs.serverKey })).toBe(
      `--tls-cert ${certs.serverKey} is not a PEM certificate`,
    );
    expect(await refusal({ certFile: certs.serverCert, keyFile: certs.serverCert })).toContain(
      `--tls-key ${certs.serverCert} is not a PEM private key`,
    );
    expect(await refusal({ certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: certs.serverKey })).toBe(
      `--tls-client-ca ${certs.serverKey} is not a PEM certificate`,
    );
    // A chain whose first certificate is fine but whose second is not.
    const brokenChain = join(certs.dir, "broken-chain.crt");
    await writeFile(
      brokenChain,
      `${await readFile(certs.serverCert, "utf8")}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
    );
    expect(await refusal({ certFile: brokenChain, keyFile: certs.serverKey })).toMatch(
      new RegExp(`^--tls-cert ${brokenChain} and --tls-key ${certs.serverKey} are not usable together: ERR_`),
    );
    await expect(loadClientCredentials({ certFile: certs.clientACert })).rejects.toThrow("--tls-cert needs --tls-key");
    await expect(loadClientCredentials({ caFile: absent })).rejects.toThrow(`cannot read --tls-ca ${absent}: ENOENT`);
    await expect(loadClientCredentials({ caFile: certs.clientAKey })).rejects.toThrow(
      `--tls-ca ${certs.clientAKey} is not a PEM certificate`,
    );
    await expect(loadClientCredentials({ certFile: certs.clientACert, keyFile: certs.clientBKey })).rejects.toThrow(
      `--tls-key ${certs.clientBKey} is not the private key of the certificate in --tls-cert ${certs.clientACert}`,
    );
  });
});

/** One GET over HTTP or HTTPS with a fresh connection; rejects if the connection or handshake fails. */
function get(
  url: string,
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (response: import("node:http").IncomingMessage) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      response.on("error", reject);
    };
    const call = url.startsWith("https:")
      ? httpsRequest(url, { ...tls, agent: false, timeout: 15_000 }, onResponse)
      : httpRequest(url, { agent: false, timeout: 15_000 }, onResponse);
    call.on("timeout", () => call.destroy(new Error("timed out")));
    call.on("error", reject);
    call.end();
  });
}
