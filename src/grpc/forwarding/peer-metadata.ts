import { Metadata } from "@grpc/grpc-js";
import { statusDetailsKey } from "../../protocol/error-reasons.js";
import { forwardedFromKey } from "../../protocol/routing-metadata.js";

// Keys grpc-js and HTTP/2 set on each call or answer themselves: copied
// from one call to the next they would be sent twice, or contradict the
// channel's own (user-agent, grpc-encoding).
const perCallKeys = new Set(["user-agent", "content-type", "te", "date", "accept-encoding", "content-length"]);

function copied(key: string): boolean {
  return !perCallKeys.has(key) && (!key.startsWith("grpc-") || key === statusDetailsKey);
}

function copyOf(metadata: Metadata): Metadata {
  const copy = new Metadata();
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (!copied(key)) continue;
    for (const value of values) copy.add(key, value);
  }
  return copy;
}

/**
 * The metadata of a call passed to a queue's owner: the caller's own (its
 * authorization, so the owner checks the token again), and the sender's
 * node id under holdshelf-forwarded-from, replacing any the caller sent.
 */
export function forwardedMetadata(caller: Metadata, selfNodeId: string): Metadata {
  const metadata = copyOf(caller);
  metadata.set(forwardedFromKey, selfNodeId);
  return metadata;
}

/** Whether a call came from another broker, which routed it here: this broker must not pass it on again. */
export function isForwarded(metadata: Metadata): boolean {
  return metadata.get(forwardedFromKey).length > 0;
}

/** An owner's trailers as the caller gets them: everything but what grpc-js sets for each answer. */
export function ownerTrailers(metadata: Metadata): Metadata {
  return copyOf(metadata);
}
