import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging/logger.js";
import { ListenPolicyError } from "../../src/security/listen-policy.js";
import { TlsConfigError } from "../../src/net/tls-file-checks.js";
import {
  loadTransportSecurity,
  transportFlagOptions,
  type TransportFlagValues,
} from "../../src/cli/tls-serve-flags.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { useTestCerts } from "../security/tls-certs.js";

const missing = missingCommands(["openssl"]);

describe.skipIf(skipWithout(missing))("the serve command's transport flags", () => {
  const certs = useTestCerts(missing);

  const load = async (
    values: TransportFlagValues,
    listeners: {
      listen?: string;
      metricsListen?: string | undefined;
      authenticated?: boolean;
      consoleListen?: string;
    } = {},
  ) => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line) as { level: string; msg: string }) });
    const transport = await loadTransportSecurity(
      values,
      { listen: "127.0.0.1:0", metricsListen: "127.0.0.1:0", authenticated: false, ...listeners },
      logger,
    );
    return { transport, warnings: lines.filter((line) => line.level === "warn").map((line) => line.msg) };
  };
  const serverFiles = () => ({ "tls-cert": certs.serverCert, "tls-key": certs.serverKey });

  it("is plaintext without flags, and gives metrics the gRPC certificate only with --metrics-tls", async () => {
    expect((await load({})).transport).toEqual({});
    const grpcOnly = (await load(serverFiles())).transport;
    expect(grpcOnly.tls?.clientCa).toBeUndefined();
    expect(grpcOnly.metricsTls).toBeUndefined();
    const both = (await load({ ...serverFiles(), "tls-client-ca": certs.caA, "metrics-tls": true })).transport;
    expect(both.metricsTls).toBe(both.tls);
    expect(both.tls?.clientCa).toBeDefined();
    // With the metrics listener off there is nothing to secure.
    expect(
      (await load({ ...serverFiles(), "metrics-tls": true }, { metricsListen: undefined })).transport.metricsTls,
    ).toBeUndefined();
    await expect(load({ "metrics-tls": true })).rejects.toThrow(TlsConfigError);
  });

  it("reads --peer-tls-ca only beside the listener's own TLS, and refuses a file that is not a certificate", async () => {
    const { transport } = await load({ ...serverFiles(), "peer-tls-ca": certs.caB });
    expect(transport.peerCa?.toString()).toContain("BEGIN CERTIFICATE");
    await expect(load({ "peer-tls-ca": certs.caA })).rejects.toThrow(/--peer-tls-ca needs --tls-cert and --tls-key/);
    await expect(load({ ...serverFiles(), "peer-tls-ca": certs.serverKey })).rejects.toThrow(TlsConfigError);
    await expect(load({ ...serverFiles(), "peer-tls-ca": `${certs.dir}/missing.crt` })).rejects.toThrow(
      /--peer-tls-ca/,
    );
  });

  it("lets client certificates on metrics open the metrics listener, but not gRPC certificates alone", async () => {
    const mutual = { ...serverFiles(), "tls-client-ca": certs.caA };
    await expect(load(mutual, { listen: "0.0.0.0:0", metricsListen: "0.0.0.0:0" })).rejects.toThrow(ListenPolicyError);
    const { warnings } = await load(
      { ...mutual, "metrics-tls": true },
      { listen: "0.0.0.0:0", metricsListen: "0.0.0.0:0" },
    );
    expect(warnings).toEqual([]);
  });

  it("warns of listeners open by the explicit flag, and of bearer tokens sent in plaintext beyond loopback", async () => {
    const open = await load({ "allow-unauthenticated-network": true }, { listen: "0.0.0.0:0" });
    expect(open.warnings).toEqual([
      "--allow-unauthenticated-network: listening beyond loopback without authentication",
    ]);
    expect((await load({ "allow-unauthenticated-network": true })).warnings).toEqual([]);
    const plaintextTokens = await load({}, { listen: "0.0.0.0:0", authenticated: true });
    expect(plaintextTokens.warnings).toEqual([expect.stringContaining("bearer tokens cross the network in plaintext")]);
    expect((await load(serverFiles(), { listen: "0.0.0.0:0", authenticated: true })).warnings).toEqual([]);
    expect((await load({}, { authenticated: true })).warnings).toEqual([]);
    // The console's sign-in page takes the same tokens.
    const plaintextConsole = await load({}, { authenticated: true, consoleListen: "0.0.0.0:9465" });
    expect(plaintextConsole.warnings).toEqual([
      expect.stringContaining("bearer tokens cross the network in plaintext"),
    ]);
    expect((await load(serverFiles(), { authenticated: true, consoleListen: "0.0.0.0:9465" })).warnings).toEqual([]);
    expect((await load({}, { authenticated: true, consoleListen: "127.0.0.1:9465" })).warnings).toEqual([]);
  });

  it("reads its switches from the environment strictly", () => {
    expect(transportFlagOptions({ HOLDSHELF_METRICS_TLS: "true" })["metrics-tls"].default).toBe(true);
    expect(
      transportFlagOptions({ HOLDSHELF_ALLOW_UNAUTHENTICATED_NETWORK: "0" })["allow-unauthenticated-network"].default,
    ).toBe(false);
    expect(transportFlagOptions({ HOLDSHELF_TLS_CERT: "/c", HOLDSHELF_TLS_KEY: "/k" })["tls-key"].default).toBe("/k");
    expect(() => transportFlagOptions({ HOLDSHELF_ALLOW_UNAUTHENTICATED_NETWORK: "yes" })).toThrow(UsageError);
  });
});
