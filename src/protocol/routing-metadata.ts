// The metadata keys of cluster mode's forwarding (docs/api.md, "Cluster mode:
// forwarding and the owner hint"): one a client may read, the rest only
// brokers send each other.

/** The trailer naming the broker (host:port) that served a call on a queue: where to send that queue's calls next. */
export const ownerHintKey = "holdshelf-owner";

/**
 * The header of a call one broker passes to another: the sender's node id.
 * Its receiver never passes the call on again (its sender's view of the
 * shards was stale), so a call takes at most one hop.
 */
export const forwardedFromKey = "holdshelf-forwarded-from";

/**
 * Every request metadata key that starts with this is the brokers' own: a
 * broker reads one only on a call that carries a valid peer proof, and
 * drops the rest (src/grpc/internal-metadata-guard.ts), so a client cannot
 * pose as a broker, whatever the next internal key will mean.
 */
export const internalKeyPrefix = "holdshelf-";

/** The header by which a broker proves to another of its cluster that a call comes from a peer (src/security/peer-proof.ts). */
export const peerProofKey = "holdshelf-peer-proof";
