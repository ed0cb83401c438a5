import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";

// Reading and checking PEM files, for the server's --tls-* flags and the
// client's loadClientCredentials alike: a wrong file is named by its flag
// and path before any handshake fails.

/** A TLS setting that cannot work; its message names the flag and file, never the files' contents. */
export class TlsConfigError extends Error {
  override readonly name = "TlsConfigError";
}

/** Reads a TLS file; the error names the flag and path and why, and nothing of what is inside. */
export async function readTlsFile(flag: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new TlsConfigError(`cannot read ${flag} ${path}: ${errorCode(error)}`);
  }
}

/** Checks that --tls-cert holds a PEM certificate and --tls-key an unencrypted PEM key, and that the key is the certificate's. */
export function checkKeyPair(certFile: string, cert: Buffer, keyFile: string, key: Buffer): void {
  const certificate = parseCertificate("--tls-cert", certFile, cert);
  const privateKey = parsePrivateKey(keyFile, key);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new TlsConfigError(
      `--tls-key ${keyFile} is not the private key of the certificate in --tls-cert ${certFile}`,
    );
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
    throw new TlsConfigError(
      `--tls-key ${path} is not a PEM private key (or it is encrypted: holdshelf takes unencrypted keys)`,
    );
  }
}

/** The Node error code of a failed file or TLS call (ENOENT, say); never its message, which may quote the input. */
export function errorCode(error: unknown): string {
  return (error as { code?: string }).code ?? "unknown error";
}
