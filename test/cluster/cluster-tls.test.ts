// Forwarding between brokers of a cluster that serve mutual TLS: a broker
// calls the queue's owner over TLS, trusting --peer-tls-ca and presenting
// its own certificate, as the owner's listener demands. A peer CA that did
// not issue the owner's certificate reaches nothing: QUEUE_MOVING.
import { credentials } from "@grpc/grpc-js";
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { HoldshelfServer } from "../../src/server/holdshelf-server.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { queueOn, startClusterBroker } from "../support/cluster-brokers.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { issueServerCert, pem, useTestCerts } from "../security/tls-certs.js";

const postgres = postgresForFile();
const missing = missingCommands(["openssl"]);
// A queue that the cluster {a, b} places on b, called through a.
const queue = queueOn("b", ["a", "b"], "tls");

describe.skipIf(skipWithoutPostgres || skipWithout(missing))("brokers forwarding over mutual TLS", () => {
  const certs = useTestCerts(missing);
  let url: string;
  const servers: HoldshelfServer[] = [];
  let rpc: QueueServiceRpc & { close(): void };

  beforeEach(async () => {
    url = await postgres().createDatabase();
  });
  afterEach(async () => {
    rpc?.close();
    await Promise.all(servers.splice(0).map((server) => server.shutdown()));
  });

  async function startBroker(nodeId: string, peerCaFile: string): Promise<HoldshelfServer> {
    const tls = (await loadServerTls({
      certFile: certs.brokerCert,
      keyFile: certs.brokerKey,
      clientCaFile: certs.caA,
    }))!;
    const server = await startClusterBroker(url, nodeId, { tls, peerCa: await pem(peerCaFile) });
    servers.push(server);
    return server;
  }

  async function twoBrokers(peerCaFile: string): Promise<HoldshelfServer> {
    const a = await startBroker("a", peerCaFile);
    const b = await startBroker("b", peerCaFile);
    await vi.waitFor(() => expect(a.cluster!.route(queue)).toMatchObject({ kind: "remote", address: b.address }), {
      timeout: 10_000,
      interval: 50,
    });
    const clientCredentials = credentials.createSsl(
      await pem(certs.caA),
      await pem(certs.clientAKey),
      await pem(certs.clientACert),
    );
    rpc = createQueueServiceRpc(a.address, { credentials: clientCredentials });
    return a;
  }

  it("forwards a call to the owner over TLS", async () => {
    await twoBrokers(certs.caA);
    await rpc.createQueue({ name: queue });
    const { messageId } = await rpc.send({ queue, body: Buffer.from("over tls") });
    const [message] = (await rpc.receive({ queue })).messages;
    expect(message?.messageId).toBe(messageId);
  });

  it("reaches no owner whose certificate its peer CA did not issue", async () => {
    await twoBrokers(certs.caB);
    const error = await rpc.createQueue({ name: queue }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).reason).toBe("QUEUE_MOVING");
  });

  it("presents its rotated certificate to the other brokers, and trusts the rotated CA, once it reloads its files", async () => {
    // Both brokers read the files the rotation rewrites; b starts only after it, so a's first connection to b is new.
    const live = {
      certFile: join(certs.dir, "peer-live.crt"),
      keyFile: join(certs.dir, "peer-live.key"),
      clientCaFile: join(certs.dir, "peer-live-ca.crt"),
    };
    await copyFile(certs.brokerCert, live.certFile);
    await copyFile(certs.brokerKey, live.keyFile);
    await copyFile(certs.caA, live.clientCaFile);
    const startFromFiles = async (nodeId: string): Promise<HoldshelfServer> => {
      const server = await startClusterBroker(url, nodeId, { tls: (await loadServerTls(live))!, tlsFiles: live });
      servers.push(server);
      return server;
    };
    const a = await startFromFiles("a");
    // Rotated to CA B alone: a broker still presenting, or trusting, CA A's certificate reaches nothing.
    const rotated = await issueServerCert(certs, "broker-rotated", "127.0.0.1", certs.caB, "serverAuth,clientAuth");
    await copyFile(rotated.key, live.keyFile);
    await copyFile(rotated.cert, live.certFile);
    await copyFile(certs.caB, live.clientCaFile);
    expect(await a.reloadTls()).toBe(true);
    const b = await startFromFiles("b");
    await vi.waitFor(() => expect(a.cluster!.route(queue)).toMatchObject({ kind: "remote", address: b.address }), {
      timeout: 10_000,
      interval: 50,
    });
    rpc = createQueueServiceRpc(a.address, {
      credentials: credentials.createSsl(
        await pem(certs.caB),
        await pem(certs.clientBKey),
        await pem(certs.clientBCert),
      ),
    });
    await rpc.createQueue({ name: queue });
    const { messageId } = await rpc.send({ queue, body: Buffer.from("after the rotation") });
    expect((await rpc.receive({ queue })).messages[0]?.messageId).toBe(messageId);
  });
});
