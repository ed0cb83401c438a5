import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";

/** A listener's TLS material, read and checked: PEM certificate chain, private key, and the CA client certificates must come from. */
export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** If set, clients must present a certificate this CA issued (mutual TLS). */
  readonly clientCa?: Buffer;
}

/** The --tls-* file paths of `holdshelf serve`, as given. */
export interface ServerTlsFiles {
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  readonly clientCaFile?: string | undefined;
}

/** A TLS setting that cannot work; its message names the flag and file, never the files' contents. */
export class TlsConfigError extends Error {
  override readonly name = "TlsConfigError";
}

/**
 * Reads and checks the server's TLS files: both of cert and key or neither,
 * a client CA only with them, each file readable and PEM, and the key the
 * certificate's. Undefined when no TLS flag is given (plaintext).
 */
export async function loadServerTls(files: ServerTlsFiles): Promise<ServerTls | undefined> {
  const { certFile, keyFile, clientCaFile } = files;
  if (certFile === undefined && keyFile === undefined) {
    if (clientCaFile !== undefined) throw new TlsConfigError("--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS first");
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
    throw new TlsConfigError(`--tls-cert ${certFile} and --tls-key ${keyFile} are not usable together: ${codeOf(error)}`);
  }
  return { cert, key, ...(clientCa === undefined ? {} : { clientCa }) };
}

/** Reads a TLS file; the error names the flag and path and why, and nothing of what is inside. */
export async function readTlsFile(flag: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new TlsConfigError(`cannot read ${flag} ${path}: ${codeOf(error)}`);
  }
}

/** Checks that --tls-cert holds a PEM certificate and --tls-key an unencrypted PEM key, and that the key is the certificate's. */
export function checkKeyPair(certFile: string, cert: Buffer, keyFile: string, key: Buffer): void {
  const certificate = parseCertificate("--tls-cert", certFile, cert);
  const privateKey = parsePrivateKey(keyFile, key);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsConfigError(`--tls-key ${keyFile} is not the private key of the certificate in --tls-cert ${certFile}`);
  }
}

/** Parses the first PEM certificate of a file (a CA file may hold several); the error names the flag and path. */
export function parseCertificate(flag: string, path: string, pem: Buffer): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new TlsConfigError(`${flag} ${path} is not a PEM certificate`);
  }
}

function parsePrivateKey(path: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    // OpenSSL's message is left out on purpose: it is not needed and a parser's message may quote its input.
    throw new TlsConfigError(`--tls-key ${path} is not a PEM private key (or it is encrypted: holdshelf takes unencrypted keys)`);
  }
}

function codeOf(error: unknown): string {
  return (error as { code?: string }).code ?? "unknown error";
}
