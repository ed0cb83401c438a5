import { experimental, type ChannelCredentials, type ServerCredentials } from "@grpc/grpc-js";
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
  const provider = new ReloadingCertificates(reload, (tls) => tls.clientCa);
  const mutual = reload.current.clientCa !== undefined;
  // grpc-js 1.14's createCertificateProviderServerCredentials hands its first argument to the
  // credentials as the identity provider and its second as the CA provider, whatever their names
  // say; one provider serves both, and "no CA" (plain TLS, no client certificates asked) is the null.
  return experimental.createCertificateProviderServerCredentials(provider, mutual ? provider : null, mutual);
}

/**
 * The credentials a broker forwards calls to the other brokers of its cluster with, under mutual
 * TLS (peer-credentials.ts): it presents its own certificate, which rotates with its listener's,
 * and trusts `peerCa` (--peer-tls-ca, read once), else the client CA in use. Channels take the
 * new material for their new connections; open ones keep theirs.
 */
export function reloadingPeerCredentials(reload: ServerTlsReload, peerCa: Buffer | undefined): ChannelCredentials {
  const provider = new ReloadingCertificates(reload, (tls) => peerCa ?? tls.clientCa);
  return experimental.createCertificateProviderChannelCredentials(provider, provider);
}

/** One provider of both the broker's certificate and key and a CA, from a ServerTlsReload. */
class ReloadingCertificates implements experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(
    private readonly reload: ServerTlsReload,
    private readonly caOf: (tls: ServerTls) => Buffer | undefined,
  ) {
    reload.onChange((tls) => {
      for (const listener of this.identityListeners) listener(identityOf(tls));
      for (const listener of this.caListeners) listener(this.caUpdate(tls));
    });
  }

  // The first material is handed over on a later tick: grpc-js adds the listener before the
  // watcher that applies what it hears, and would miss an answer given at once.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => listener(this.caUpdate(this.reload.current)));
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

  private caUpdate(tls: ServerTls): experimental.CaCertificateUpdate | null {
    const ca = this.caOf(tls);
    return ca === undefined ? null : { caCertificate: ca };
  }
}

function identityOf(tls: ServerTls): experimental.IdentityCertificateUpdate {
  return { certificate: tls.cert, privateKey: tls.key };
}
