// The metadata keys of cluster mode's forwarding (docs/api.md, "Cluster mode:
// forwarding and the owner hint"): one a client may read, one only brokers
// send each other.

/** The trailer naming the broker (host:port) that served a call on a queue: where to send that queue's calls next. */
export const ownerHintKey = "holdshelf-owner";

/**
 * The header of a call one broker passes to another: the sender's node id.
 * Its receiver never passes the call on again (its sender's view of the
 * shards was stale), so a call takes at most one hop.
 */
export const forwardedFromKey = "holdshelf-forwarded-from";
