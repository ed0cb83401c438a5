import { X509Certificate } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../logging/logger.js";
import type { ServerTls } from "../net/server-tls.js";
import { TlsConfigError } from "../net/tls-file-checks.js";
import { loadServerTls, type ServerTlsFiles } from "./tls-files.js";

// A rotation writes several files (cert-manager swaps a directory link; others write cert, then key):
// one reload this long after the last change sees them all.
const watchDebounceMs = 500;

/** Told of new TLS material, once it has been read and checked. */
export type TlsListener = (tls: ServerTls) => void;

/**
 * The listeners' TLS material, read again from its files on request (SIGHUP)
 * and when they change (certificate rotation). New material is checked as
 * at start (readable, PEM, key of the certificate, usable together) before
 * anyone sees it: a bad file is refused, logged, and the material in use
 * kept. The listeners take it for new connections; open ones keep theirs.
 */
export class ServerTlsReload {
  private tls: ServerTls;
  private readonly listeners: TlsListener[] = [];
  private readonly watchers: FSWatcher[] = [];
  private debounce: NodeJS.Timeout | undefined;
  // Reloads run one at a time, so that an older read never replaces a newer one.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    initial: ServerTls,
    private readonly files: ServerTlsFiles,
    private readonly logger: Logger,
  ) {
    this.tls = initial;
  }

  /** The material in use now. */
  get current(): ServerTls {
    return this.tls;
  }

  /** Calls `listener` with every new material from now on. */
  onChange(listener: TlsListener): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the files again: resolves true if they are in use now (new or
   * unchanged), false if they were refused and the old material kept, or a
   * listener could not take them.
   */
  reload(): Promise<boolean> {
    const next = this.queue.then(() => this.readAndSwap());
    // The next reload waits for this one to end, not to succeed: one that failed must not refuse every later one.
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Watches the files' directories and reloads shortly after a change. Best
   * effort: some file systems report nothing (SIGHUP is the guarantee).
   */
  watch(): void {
    const directories = new Set(
      [this.files.certFile, this.files.keyFile, this.files.clientCaFile]
        .filter((file) => file !== undefined)
        .map((file) => dirname(file)),
    );
    for (const directory of directories) {
      try {
        const watcher = watch(directory, { persistent: false }, () => this.changed());
        watcher.on("error", (error) => this.logger.warn("cannot watch the TLS files", { directory, error }));
        this.watchers.push(watcher);
      } catch (error) {
        this.logger.warn("cannot watch the TLS files: SIGHUP reloads them", { directory, error });
      }
    }
  }

  /** Stops watching. */
  close(): void {
    clearTimeout(this.debounce);
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  private changed(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(
      () =>
        this.reload().catch((error: unknown) =>
          this.logger.error("TLS files reload failed: the certificate in use is kept", { error }),
        ),
      watchDebounceMs,
    );
    this.debounce.unref();
  }

  private async readAndSwap(): Promise<boolean> {
    let next: ServerTls | undefined;
    try {
      next = await loadServerTls(this.files);
    } catch (error) {
      // TlsConfigError's message names the flag, the file and why, never the contents.
      const reason = error instanceof TlsConfigError ? error.message : String(error);
      this.logger.error("TLS files refused: the certificate in use is kept", { reason });
      return false;
    }
    if (next === undefined || sameMaterial(next, this.tls)) return true;
    this.tls = next;
    // Each listener takes it on its own: one that fails (logged) keeps its old material, and the others still switch.
    let taken = true;
    for (const listener of this.listeners) {
      try {
        listener(next);
      } catch (error) {
        taken = false;
        this.logger.error("a listener could not take the reloaded TLS files: it keeps the certificate it had", {
          error,
        });
      }
    }
    const certificate = new X509Certificate(next.cert);
    this.logger.info("TLS certificate reloaded", {
      subject: certificate.subject,
      issuer: certificate.issuer,
      validTo: certificate.validTo,
      fingerprint256: certificate.fingerprint256,
    });
    return taken;
  }
}

function sameMaterial(a: ServerTls, b: ServerTls): boolean {
  const sameCa =
    a.clientCa === undefined || b.clientCa === undefined ? a.clientCa === b.clientCa : a.clientCa.equals(b.clientCa);
  return a.cert.equals(b.cert) && a.key.equals(b.key) && sameCa;
}
