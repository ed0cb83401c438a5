import type { Deadline, Metadata, ServiceError } from "@grpc/grpc-js";
import type { ClusterPeer } from "../../cluster/queue-router.js";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { ownerFailure } from "./owner-failure.js";
import type { PeerClients } from "./peer-clients.js";

/** One unary call to pass on to a queue's owner. */
export interface UnaryForward {
  readonly owner: ClusterPeer;
  /** The method's path, the same the caller called. */
  readonly path: string;
  readonly request: Uint8Array;
  /** The caller's metadata as forwardedMetadata() made it. */
  readonly metadata: Metadata;
  /** The caller's: the owner gives up when the caller does. */
  readonly deadline: Deadline;
  /** Aborts when the caller cancels: the owner's call is cancelled too (a waiting Receive stops waiting). */
  readonly signal: AbortSignal;
}

const asBytes = (bytes: Buffer): Buffer => bytes;

/**
 * Calls the owner with the request's bytes. Resolves with its answer's
 * bytes; rejects with its error status as it came (ForwardedStatus), or
 * QUEUE_MOVING if it cannot be reached, or SHUTTING_DOWN once this broker
 * stops (PeerClients.stopCalls()).
 */
export function forwardUnary(peers: PeerClients, forward: UnaryForward): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const { owner, request, signal } = forward;
    const { stopping } = peers;
    if (stopping.aborted) return reject(shuttingDown());
    const cancel = (): void => call.cancel();
    let stopped = false;
    // This broker is stopping: the call ends now, not when the owner answers (a forwarded long poll
    // would hold the drain for its whole wait), and the caller retries on another broker.
    const stop = (): void => {
      stopped = true;
      call.cancel();
    };
    const call = peers
      .client(owner.address)
      .makeUnaryRequest(
        forward.path,
        asBytes,
        asBytes,
        Buffer.from(request.buffer, request.byteOffset, request.byteLength),
        forward.metadata,
        { deadline: forward.deadline },
        (error: ServiceError | null, answer?: Buffer) => {
          signal.removeEventListener("abort", cancel);
          stopping.removeEventListener("abort", stop);
          if (stopped) reject(shuttingDown());
          else if (error !== null) reject(ownerFailure(error, owner));
          else resolve(answer!);
        },
      );
    stopping.addEventListener("abort", stop, { once: true });
    if (signal.aborted) call.cancel();
    else signal.addEventListener("abort", cancel, { once: true });
  });
}

function shuttingDown(): HoldshelfError {
  return new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down");
}
