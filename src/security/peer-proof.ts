import { createHmac, timingSafeEqual } from "node:crypto";

// Distinct from every other use of the cluster's key (receipt handles), so a
// proof says nothing about a handle and no handle works as a proof.
const proofLabel = "holdshelf peer proof v1";

/**
 * What a broker sends under holdshelf-peer-proof on every call it makes to
 * another broker of its cluster: a MAC of a fixed label under the key every
 * broker of the cluster shares (cluster mode's handle key, read from
 * PostgreSQL), so only a broker of the cluster can make it. It is as secret
 * as a bearer token and crosses the network as one does: in TLS when the
 * brokers use it, which docs/security.md asks for beyond loopback.
 */
export function peerProof(clusterKey: Uint8Array): string {
  return createHmac("sha256", clusterKey).update(proofLabel).digest("base64url");
}

/** Whether `sent` is the proof `expected` (constant time, so a caller cannot find it byte by byte). */
export function isPeerProof(sent: unknown, expected: string): boolean {
  if (typeof sent !== "string") return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
