import { ServerInterceptingCall, type Metadata, type ServerInterceptor } from "@grpc/grpc-js";
import { internalKeyPrefix, peerProofKey } from "../protocol/routing-metadata.js";
import { isPeerProof } from "../security/peer-proof.js";

/**
 * Drops every holdshelf-* key of a call's metadata unless the call carries
 * the cluster's peer proof, as soon as the metadata arrives and before any
 * handler reads it. A client that sets holdshelf-forwarded-from is then
 * served as the client it is, instead of being taken for a broker that
 * passed the call on; and any internal key added later is guarded the same
 * way. `expectedProof` is undefined on a broker with no peers: every such
 * key is dropped.
 *
 * Dropped rather than refused: a broker of an older release, mid rolling
 * upgrade, forwards without a proof, and its call is then simply routed
 * again (one more hop) instead of failing.
 */
export function createInternalMetadataGuard(expectedProof: string | undefined): ServerInterceptor {
  return (_method, call) =>
    new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            nextMetadata(guarded(metadata, expectedProof));
          },
        });
      },
    });
}

function guarded(metadata: Metadata, expectedProof: string | undefined): Metadata {
  const internal = Object.keys(metadata.getMap()).filter((key) => key.startsWith(internalKeyPrefix));
  if (internal.length === 0) return metadata;
  const proofs = metadata.get(peerProofKey);
  const fromPeer = expectedProof !== undefined && proofs.length === 1 && isPeerProof(proofs[0], expectedProof);
  // The proof itself is dropped either way: no handler needs it, and a forwarded call must not carry it on.
  for (const key of internal) if (!fromPeer || key === peerProofKey) metadata.remove(key);
  return metadata;
}
