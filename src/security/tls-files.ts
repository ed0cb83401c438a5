import { createSecureContext } from "node:tls";
import type { ServerTls } from "../net/server-tls.js";
import { checkKeyPair, errorCode, parseCertificate, readTlsFile, TlsConfigError } from "../net/tls-file-checks.js";

/** The --tls-* file paths of `holdshelf serve`, as given. */
export interface ServerTlsFiles {
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  readonly clientCaFile?: string | undefined;
}

/**
 * Reads and checks the server's TLS files: both of cert and key or neither,
 * a client CA only with them, each file readable and PEM, and the key the
 * certificate's. Undefined when no TLS flag is given (plaintext).
 */
export async function loadServerTls(files: ServerTlsFiles): Promise<ServerTls | undefined> {
  const { certFile, keyFile, clientCaFile } = files;
  if (certFile === undefined && keyFile === undefined) {
    if (clientCaFile !== undefined)
      throw new TlsConfigError("--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS first");
    return undefined;
  }
  if (keyFile === undefined) throw new TlsConfigError("--tls-cert needs --tls-key");
  if (certFile === undefined) throw new TlsConfigError("--tls-key needs --tls-cert");
  const cert = await readTlsFile("--tls-cert", certFile);
  const key = await readTlsFile("--tls-key", keyFile);
  const clientCa = clientCaFile === undefined ? undefined : await readTlsFile("--tls-client-ca", clientCaFile);
  checkKeyPair(certFile, cert, keyFile, key);
  if (clientCa !== undefined) parseCertificate("--tls-client-ca", clientCaFile!, clientCa);
  try {
    // What the listeners will do with it: catches what the checks above do not (a broken chain file, say).
    createSecureContext({ cert, key, ...(clientCa === undefined ? {} : { ca: clientCa }) });
  } catch (error) {
    throw new TlsConfigError(
      `--tls-cert ${certFile} and --tls-key ${keyFile} are not usable together: ${errorCode(error)}`,
    );
  }
  return { cert, key, ...(clientCa === undefined ? {} : { clientCa }) };
}
