import { experimental, type ServerCredentials } from "@grpc/grpc-js";
import type { ServerTls } from "../net/server-tls.js";
import type { ServerTlsReload } from "./server-tls-reload.js";

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/**
 * The gRPC listener's credentials over material that a ServerTlsReload
 * replaces: grpc-js's certificate provider interface, through which it
 * gives new connections the new material (Http2SecureServer.setSecureContext)
 * and leaves open connections as they are. Mutual TLS when there is a client CA.
 */
export function reloadingServerCredentials(reload: ServerTlsReload): ServerCredentials {
  const provider = new ReloadingCertificates(reload);
  const mutual = reload.current.clientCa !== undefined;
  // grpc-js 1.14's createCertificateProviderServerCredentials hands its first argument to the
  // credentials as the identity provider and its second as the CA provider, whatever their names
  // say; one provider serves both, and "no CA" (plain TLS, no client certificates asked) is the null.
  return experimental.createCertificateProviderServerCredentials(provider, mutual ? provider : null, mutual);
}

/** One provider of both the server's certificate and key and the client CA, from a ServerTlsReload. */
class ReloadingCertificates implements experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(private readonly reload: ServerTlsReload) {
    reload.onChange((tls) => {
      for (const listener of this.identityListeners) listener(identityOf(tls));
      for (const listener of this.caListeners) listener(caOf(tls));
    });
  }

  // The first material is handed over on a later tick: grpc-js adds the listener before the
  // watcher that applies what it hears, and would miss an answer given at once.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => listener(caOf(this.reload.current)));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => listener(identityOf(this.reload.current)));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}

function identityOf(tls: ServerTls): experimental.IdentityCertificateUpdate {
  return { certificate: tls.cert, privateKey: tls.key };
}

function caOf(tls: ServerTls): experimental.CaCertificateUpdate | null {
  return tls.clientCa === undefined ? null : { caCertificate: tls.clientCa };
}
