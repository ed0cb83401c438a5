// Certificate rotation (issue #37): SIGHUP, and a change of the files, give
// new connections to every TLS listener (gRPC, the SQS endpoint, the console
// and metrics) the new certificate, while connections already open stay up;
// a bad new file is refused, logged, and the certificate in use kept.
import { credentials, Client, status } from "@grpc/grpc-js";
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { openSubscribeStream, probeSubscribeStream } from "../support/subscribe-stream.js";
import { issueServerCert, useTestCerts } from "./tls-certs.js";

const missing = missingCommands(["openssl"]);
const processTestTimeoutMs = 90_000;
// How long a test waits for a reload to show: SIGHUP's is at once, a watched change's after a 500 ms debounce.
const reloadWaitMs = 10_000;

/** The SHA-256 fingerprint of the certificate a new TLS connection to `address` is served. */
function servedFingerprint(address: string, alpn?: string[]): Promise<string> {
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: "127.0.0.1",
        servername: "localhost",
        port,
        rejectUnauthorized: false,
        ...(alpn === undefined ? {} : { ALPNProtocols: alpn }),
      },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      },
    );
    socket.on("error", reject);
  });
}

async function fingerprintOf(certFile: string): Promise<string> {
  return new X509Certificate(await readFile(certFile)).fingerprint256;
}

/** Polls `read` until it gives `expected`, or fails after reloadWaitMs. */
async function eventually<T>(read: () => Promise<T>, expected: T): Promise<void> {
  const deadline = Date.now() + reloadWaitMs;
  let last = await read();
  while (last !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  expect(last).toBe(expected);
}

describe.skipIf(skipWithout(missing))("certificate rotation", () => {
  const certs = useTestCerts(missing);
  let broker: BrokerProcess | undefined;
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
      broker.child.kill("SIGKILL");
      await once(broker.child, "exit");
    }
    broker = undefined;
  });

  it(
    "SIGHUP and a change of the files serve a new certificate from a new CA on every listener, without cutting open streams; a bad file is refused",
    async () => {
      // The broker reads its certificate from paths that the test rewrites, as cert-manager would.
      const live = { cert: join(certs.dir, "live.crt"), key: join(certs.dir, "live.key") };
      await copyFile(certs.serverCert, live.cert);
      await copyFile(certs.serverKey, live.key);
      broker = await startBrokerProcess(join(certs.dir, "data-rotation"), [
        "--tls-cert",
        live.cert,
        "--tls-key",
        live.key,
        "--metrics-tls",
        "--sqs-listen",
        "127.0.0.1:0",
        "--console-listen",
        "127.0.0.1:0",
      ]);
      const b = broker;
      const sqs = /"sqsAddress":"([^"]+)"/.exec(b.logs())![1]!;
      const consoleAddress = /"console":"https:\/\/([^/"]+)\//.exec(b.logs())![1]!;
      const listeners = {
        grpc: () => servedFingerprint(b.address, ["h2"]),
        sqs: () => servedFingerprint(sqs),
        console: () => servedFingerprint(consoleAddress),
        metrics: () => servedFingerprint(b.metricsAddress),
      };
      const served = async () =>
        JSON.stringify(await Promise.all(Object.values(listeners).map((fingerprint) => fingerprint())));
      const everywhere = (fingerprint: string) => JSON.stringify(Object.keys(listeners).map(() => fingerprint));
      const old = await fingerprintOf(certs.serverCert);
      expect(await served()).toBe(everywhere(old));

      // A consumer's stream, opened on a connection that trusts CA A only.
      const rpcA = createQueueServiceRpc(b.address, { credentials: credentials.createSsl(await readFile(certs.caA)) });
      cleanups.push(() => rpcA.close());
      await rpcA.createQueue({ name: "jobs" });
      const clientA = new Client(b.address, credentials.createSsl(await readFile(certs.caA)));
      cleanups.push(() => clientA.close());
      const stream = openSubscribeStream(b.address, undefined, { client: clientA });
      cleanups.push(() => stream.close());
      stream.send({ queue: "jobs" });
      await probeSubscribeStream(stream);

      // A file that is not PEM: refused, logged, and the old certificate still served.
      const refusals = () => b.logs().split("TLS files refused").length - 1;
      await writeFile(live.cert, "not a certificate\n");
      b.child.kill("SIGHUP");
      await eventually(async () => refusals() > 0, true);
      expect(b.logs()).toContain(`--tls-cert ${live.cert} is not a PEM certificate`);
      expect(await served()).toBe(everywhere(old));
      // A certificate whose key is not the one beside it: refused too.
      const other = await issueServerCert(certs, "rotation-other", "127.0.0.1");
      await copyFile(other.cert, live.cert);
      const before = refusals();
      b.child.kill("SIGHUP");
      await eventually(async () => refusals() > before, true);
      expect(b.logs()).toContain(`--tls-key ${live.key} is not the private key of the certificate`);
      expect(await served()).toBe(everywhere(old));

      // A new certificate from a new CA, and SIGHUP: new connections get it on every listener.
      const rotated = await issueServerCert(certs, "rotation-b", "127.0.0.1", certs.caB);
      await copyFile(rotated.key, live.key);
      await copyFile(rotated.cert, live.cert);
      b.child.kill("SIGHUP");
      const fresh = await fingerprintOf(rotated.cert);
      await eventually(served, everywhere(fresh));
      expect(b.logs()).toContain("TLS certificate reloaded");
      // A client that trusts the new CA only works on a new connection...
      const rpcB = createQueueServiceRpc(b.address, { credentials: credentials.createSsl(await readFile(certs.caB)) });
      cleanups.push(() => rpcB.close());
      await rpcB.send({ queue: "jobs", body: Buffer.from("after the rotation") });
      // ...and the stream opened before the rotation is still up, and delivers it.
      const [delivered] = await stream.deliveries(1);
      expect(Buffer.from(delivered!.body).toString()).toBe("after the rotation");

      // A change of the files alone, without SIGHUP: the watch reloads them.
      const watched = await issueServerCert(certs, "rotation-watched", "127.0.0.1", certs.caB);
      await copyFile(watched.key, live.key);
      await copyFile(watched.cert, live.cert);
      await eventually(served, everywhere(await fingerprintOf(watched.cert)));
    },
    processTestTimeoutMs,
  );

  it(
    "SIGHUP reloads the client CA: new connections need a certificate from the new CA, and a stream opened with the old one stays up",
    async () => {
      const clientCa = join(certs.dir, "live-client-ca.crt");
      await copyFile(certs.caA, clientCa);
      broker = await startBrokerProcess(join(certs.dir, "data-client-ca"), [
        "--tls-cert",
        certs.serverCert,
        "--tls-key",
        certs.serverKey,
        "--tls-client-ca",
        clientCa,
      ]);
      const b = broker;
      const serverCa = await readFile(certs.caA);
      const clientOf = async (cert: string, key: string) =>
        credentials.createSsl(serverCa, await readFile(key), await readFile(cert));
      const rpcA = createQueueServiceRpc(b.address, {
        credentials: await clientOf(certs.clientACert, certs.clientAKey),
      });
      cleanups.push(() => rpcA.close());
      await rpcA.createQueue({ name: "jobs" });
      const stream = openSubscribeStream(b.address, undefined, {
        client: new Client(b.address, await clientOf(certs.clientACert, certs.clientAKey)),
      });
      cleanups.push(() => stream.close());
      stream.send({ queue: "jobs" });
      await probeSubscribeStream(stream);

      await copyFile(certs.caB, clientCa);
      b.child.kill("SIGHUP");
      await eventually(async () => b.logs().includes("TLS certificate reloaded"), true);

      // A new connection with CA B's client certificate is served; one with CA A's is refused in the handshake.
      const rpcB = createQueueServiceRpc(b.address, {
        credentials: await clientOf(certs.clientBCert, certs.clientBKey),
      });
      cleanups.push(() => rpcB.close());
      await rpcB.send({ queue: "jobs", body: Buffer.from("from client B") });
      const lateA = createQueueServiceRpc(b.address, {
        credentials: await clientOf(certs.clientACert, certs.clientAKey),
      });
      cleanups.push(() => lateA.close());
      await expect(lateA.getQueue({ name: "jobs" })).rejects.toMatchObject({ code: status.UNAVAILABLE });
      // The stream opened with CA A's certificate before the reload is still up.
      const [delivered] = await stream.deliveries(1);
      expect(Buffer.from(delivered!.body).toString()).toBe("from client B");
    },
    processTestTimeoutMs,
  );
});
