import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import { checkKeyPair, parseCertificate, readTlsFile, TlsConfigError } from "../net/tls-file-checks.js";

/** A client's TLS files: the CA to trust the server by, and its own certificate and key for mutual TLS. */
export interface ClientTlsFiles {
  /** PEM CA certificate(s) the server's certificate must chain to; the system's roots if unset. */
  readonly caFile?: string | undefined;
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
}

/**
 * Channel credentials for QueueClient or createQueueServiceRpc from TLS files:
 * TLS when any file is given (undefined, for plaintext, when none is), with a
 * client certificate when both cert and key are.
 */
export async function loadClientCredentials(files: ClientTlsFiles): Promise<ChannelCredentials | undefined> {
  const { caFile, certFile, keyFile } = files;
  if (caFile === undefined && certFile === undefined && keyFile === undefined) return undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new TlsConfigError(certFile === undefined ? "--tls-key needs --tls-cert" : "--tls-cert needs --tls-key");
  }
  const ca = caFile === undefined ? null : await readTlsFile("--tls-ca", caFile);
  const cert = certFile === undefined ? null : await readTlsFile("--tls-cert", certFile);
  const key = keyFile === undefined ? null : await readTlsFile("--tls-key", keyFile);
  // Checked here so that a wrong file says which, rather than failing every call's handshake.
  if (ca !== null) parseCertificate("--tls-ca", caFile!, ca);
  if (cert !== null && key !== null) checkKeyPair(certFile!, cert, keyFile!, key);
  try {
    return credentials.createSsl(ca, key, cert);
  } catch (error) {
    // grpc-js checks the PEM here; its messages describe the problem, not the file's contents.
    throw new TlsConfigError(`client TLS files are not usable: ${(error as Error).message}`);
  }
}
