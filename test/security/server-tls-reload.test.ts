// ServerTlsReload when a listener fails to take new material: the failure
// is logged, the reload answers false, and the next reload works (one
// failed reload must not refuse every later one).
import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/logging/logger.js";
import type { ServerTls } from "../../src/net/server-tls.js";
import { loadServerTls } from "../../src/security/tls-files.js";
import { ServerTlsReload } from "../../src/security/server-tls-reload.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { issueServerCert, useTestCerts } from "./tls-certs.js";

const missing = missingCommands(["openssl"]);

/** A logger that keeps each line's message. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string): void => void lines.push(message);
  return { lines, debug: keep, info: keep, warn: keep, error: keep };
}

describe.skipIf(skipWithout(missing))("reloading the TLS files", () => {
  const certs = useTestCerts(missing);

  it("logs a listener that throws, answers false, and still reloads the next time", async () => {
    const files = { certFile: join(certs.dir, "live.crt"), keyFile: join(certs.dir, "live.key") };
    await copyFile(certs.serverCert, files.certFile);
    await copyFile(certs.serverKey, files.keyFile);
    const logger = recordingLogger();
    const reload = new ServerTlsReload((await loadServerTls(files))!, files, logger);
    const taken: ServerTls[] = [];
    let failures = 1;
    reload.onChange(() => {
      if (failures-- > 0) throw new Error("listener broke");
    });
    reload.onChange((tls) => taken.push(tls));

    const first = await issueServerCert(certs, "first", "127.0.0.1");
    await copyFile(first.cert, files.certFile);
    await copyFile(first.key, files.keyFile);
    expect(await reload.reload()).toBe(false);
    expect(logger.lines).toContain("a listener could not take the reloaded TLS files: it keeps the certificate it had");
    // The other listener took it all the same.
    expect(taken).toHaveLength(1);

    const second = await issueServerCert(certs, "second", "127.0.0.1");
    await copyFile(second.cert, files.certFile);
    await copyFile(second.key, files.keyFile);
    expect(await reload.reload()).toBe(true);
    expect(taken).toHaveLength(2);
    expect(reload.current.cert.toString()).toContain("BEGIN CERTIFICATE");
    expect(reload.current).toBe(taken[1]);
  });
});
