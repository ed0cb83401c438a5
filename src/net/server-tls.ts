/** A listener's TLS material, read and checked: PEM certificate chain, private key, and the CA client certificates must come from. */
export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** If set, clients must present a certificate this CA issued (mutual TLS). */
  readonly clientCa?: Buffer;
}
