import { status } from "@grpc/grpc-js";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { ForwardedStatus } from "../../service/forwarded-status.js";

/**
 * Why another broker gave no answer to a call a fan-out asked it:
 * "unsupported" for a broker of an older version that lacks the method (a
 * 0.1.0 broker during a rolling upgrade answers UNIMPLEMENTED), "denied" when
 * it refused the caller's token, and "unreachable" for anything else (no
 * connection, or it is moving, stopping, or without its storage).
 */
export type PeerFailure = "unreachable" | "unsupported" | "denied";

/** What forwardUnary's rejection `error` says about the broker asked. */
export function peerFailure(error: unknown): PeerFailure {
  const code = error instanceof ForwardedStatus || error instanceof HoldshelfError ? error.code : undefined;
  if (code === status.UNIMPLEMENTED) return "unsupported";
  if (code === status.PERMISSION_DENIED || code === status.UNAUTHENTICATED) return "denied";
  return "unreachable";
}

/**
 * Whether a fan-out may go on without this broker's part: it lacks the
 * method, or cannot serve now (UNAVAILABLE: not reached, moving, stopping).
 * Any other failure (a refused token, a bad request, the caller's own
 * deadline) is the answer's.
 */
export function isAbsentPeer(error: unknown): boolean {
  const code = error instanceof ForwardedStatus || error instanceof HoldshelfError ? error.code : undefined;
  return code === status.UNIMPLEMENTED || code === status.UNAVAILABLE;
}
