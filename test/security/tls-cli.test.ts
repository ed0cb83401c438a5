import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runHoldshelf, startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { useTestCerts } from "./tls-certs.js";

const missing = missingCommands(["openssl"]);
// Each case starts several node processes, which takes seconds on a loaded 2-core machine.
const processTestTimeoutMs = 90_000;

describe.skipIf(skipWithout(missing))(
  "holdshelf serve and the client commands: TLS flags and the loopback default",
  () => {
    const certs = useTestCerts(missing);
    let broker: BrokerProcess | undefined;
    let dataDirs = 0;
    const dataDir = () => join(certs.dir, `data-${++dataDirs}`);

    afterEach(async () => {
      if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
        broker.child.kill("SIGKILL");
        await once(broker.child, "exit");
      }
      broker = undefined;
    });

    /** The broker's address as a client on this machine dials it (a wildcard address names no host to call). */
    const loopbackAddress = (address: string) => `127.0.0.1:${address.slice(address.lastIndexOf(":") + 1)}`;
    const expectNoKeyMaterial = (output: string) => {
      for (const key of certs.keyContents) {
        for (const line of key.split("\n").filter((text) => text.length > 0 && !text.startsWith("-----"))) {
          expect(output).not.toContain(line);
        }
      }
    };

    it(
      "serves mutual TLS on a wildcard address without the open flag, to client commands with a certificate only",
      async () => {
        broker = await startBrokerProcess(dataDir(), [
          "--listen",
          "0.0.0.0:0",
          "--tls-cert",
          certs.serverCert,
          "--tls-key",
          certs.serverKey,
          "--tls-client-ca",
          certs.caA,
          "--metrics-tls",
        ]);
        expect(broker.logs()).toMatch(/"msg":"holdshelf listening".*"tls":"mutual","metricsTls":"mutual"/);
        const address = loopbackAddress(broker.address);
        const tlsFlags = [
          "--address",
          address,
          "--tls-ca",
          certs.caA,
          "--tls-cert",
          certs.clientACert,
          "--tls-key",
          certs.clientAKey,
        ];
        expect((await runHoldshelf(["queue", "create", "jobs", ...tlsFlags])).code).toBe(0);
        const sent = await runHoldshelf(["send", "jobs", "hello", ...tlsFlags]);
        expect(sent.code).toBe(0);
        const { messageId } = JSON.parse(sent.stdout) as { messageId: string };
        // The same settings from the environment.
        const received = await runHoldshelf(["receive", "jobs"], {
          HOLDSHELF_ADDRESS: address,
          HOLDSHELF_TLS_CA: certs.caA,
          HOLDSHELF_CLIENT_TLS_CERT: certs.clientACert,
          HOLDSHELF_CLIENT_TLS_KEY: certs.clientAKey,
        });
        expect(JSON.parse(received.stdout)).toMatchObject({ messageId, body: "hello" });

        const noCertificate = await runHoldshelf(["queue", "list", "--address", address, "--tls-ca", certs.caA]);
        expect(noCertificate.code).toBe(1);
        const otherCa = await runHoldshelf([
          "queue",
          "list",
          "--address",
          address,
          "--tls-ca",
          certs.caA,
          "--tls-cert",
          certs.clientBCert,
          "--tls-key",
          certs.clientBKey,
        ]);
        expect(otherCa.code).toBe(1);
        const plaintext = await runHoldshelf(["queue", "list", "--address", address]);
        expect(plaintext.code).toBe(1);
        expect(plaintext.stderr).toContain("No connection established");
      },
      processTestTimeoutMs,
    );

    it(
      "refuses a wildcard address for gRPC or metrics without authentication, at start, with exit 1",
      async () => {
        const refusals = await Promise.all([
          runHoldshelf(["serve", "--data-dir", dataDir(), "--listen", "0.0.0.0:0", "--metrics-listen", "off"]),
          runHoldshelf(["serve", "--data-dir", dataDir(), "--listen", "[::]:0", "--metrics-listen", "off"]),
          runHoldshelf(["serve", "--data-dir", dataDir(), "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0"]),
          // TLS without client certificates encrypts but does not say who calls.
          runHoldshelf([
            "serve",
            "--data-dir",
            dataDir(),
            "--listen",
            "0.0.0.0:0",
            "--metrics-listen",
            "off",
            "--tls-cert",
            certs.serverCert,
            "--tls-key",
            certs.serverKey,
          ]),
        ]);
        for (const refusal of refusals) {
          expect(refusal.code).toBe(1);
          expect(refusal.stderr).toContain('"msg":"cannot start"');
          expect(refusal.stderr).toContain("--allow-unauthenticated-network");
        }
        expect(refusals[0]!.stderr).toContain(
          "--listen 0.0.0.0:0 is not a loopback address and callers are not authenticated",
        );
        expect(refusals[1]!.stderr).toContain("--listen [::]:0 is not a loopback address");
        expect(refusals[2]!.stderr).toContain(
          "--metrics-listen 0.0.0.0:0 is not a loopback address and the metrics listener has no authentication",
        );
        expect(refusals[3]!.stderr).toContain("--listen 0.0.0.0:0 is not a loopback address");
      },
      processTestTimeoutMs,
    );

    it(
      "serves on a wildcard address when told it is meant to be open, and warns in its log",
      async () => {
        broker = await startBrokerProcess(dataDir(), [
          "--listen",
          "0.0.0.0:0",
          "--metrics-listen",
          "0.0.0.0:0",
          "--allow-unauthenticated-network",
        ]);
        expect(broker.logs()).toContain(
          '"level":"warn","msg":"--allow-unauthenticated-network: listening beyond loopback without authentication","addresses":["0.0.0.0:0","0.0.0.0:0"]',
        );
        expect(broker.logs()).toMatch(/"tls":"off","metricsTls":"off"/);
        const created = await runHoldshelf(["queue", "create", "open", "--address", loopbackAddress(broker.address)]);
        expect(created.code).toBe(0);
        expect(await httpStatus(`http://${loopbackAddress(broker.metricsAddress)}/healthz`)).toBe(200);
      },
      processTestTimeoutMs,
    );

    it(
      "answers TLS flag combinations that cannot work with a clear reason, exit 1, and no key material",
      async () => {
        const serve = (args: string[], env: Record<string, string> = {}) =>
          runHoldshelf(
            ["serve", "--data-dir", dataDir(), "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", ...args],
            env,
          );
        const absent = join(certs.dir, "absent.key");
        const cases: [Promise<{ code: number; stderr: string }>, string][] = [
          [serve(["--tls-cert", certs.serverCert]), "--tls-cert needs --tls-key"],
          [serve([], { HOLDSHELF_TLS_KEY: certs.serverKey }), "--tls-key needs --tls-cert"],
          [serve(["--tls-client-ca", certs.caA]), "--tls-client-ca needs --tls-cert and --tls-key"],
          [serve(["--tls-cert", certs.serverCert, "--tls-key", absent]), `cannot read --tls-key ${absent}: ENOENT`],
          [
            serve(["--tls-cert", certs.serverCert, "--tls-key", certs.clientAKey]),
            `--tls-key ${certs.clientAKey} is not the private key of the certificate`,
          ],
          [
            serve(["--tls-cert", certs.serverKey, "--tls-key", certs.serverKey]),
            `--tls-cert ${certs.serverKey} is not a PEM certificate`,
          ],
          [serve(["--metrics-tls"]), "--metrics-tls needs --tls-cert and --tls-key"],
          [serve(["--peer-tls-ca", certs.caA]), "--peer-tls-ca needs --tls-cert and --tls-key"],
          [
            serve(["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--peer-tls-ca", certs.caA]),
            "--peer-tls-ca is for cluster mode: add --postgres URL",
          ],
        ];
        const results = await Promise.all(cases.map(([result]) => result));
        results.forEach((result, index) => {
          expect(result.code, cases[index]![1]).toBe(1);
          expect(result.stderr).toContain('"msg":"cannot start"');
          expect(result.stderr).toContain(cases[index]![1]);
          expectNoKeyMaterial(result.stderr);
        });

        const client = await runHoldshelf(["queue", "list", "--tls-cert", certs.clientACert]);
        expect(client.code).toBe(1);
        expect(client.stderr).toContain("holdshelf: --tls-cert needs --tls-key");
        const clientAbsent = await runHoldshelf(["queue", "list", "--tls-ca", absent]);
        expect(clientAbsent.code).toBe(1);
        expect(clientAbsent.stderr).toContain(`holdshelf: cannot read --tls-ca ${absent}: ENOENT`);
      },
      processTestTimeoutMs,
    );
  },
);

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(url, { agent: false, timeout: 15_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.on("timeout", () => call.destroy(new Error("timed out")));
    call.on("error", reject);
    call.end();
  });
}
