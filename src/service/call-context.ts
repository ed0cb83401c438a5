import type { Deadline, Metadata } from "@grpc/grpc-js";
import type { Principal } from "../auth/permissions.js";

/**
 * Trailing metadata a handler adds to its call's answer, OK or error (the
 * owner hint). A holder rather than a field of the context: wrappers pass
 * copies of the context on, and the bridge must see what the innermost
 * handler set.
 */
export class AnswerTrailer {
  /** Sent as it is with an OK answer (grpc-js sends a copy, so one object may serve many calls); copied into an error's trailers. */
  metadata: Metadata | undefined = undefined;
}

/** What a handler knows of its call besides the request. */
export interface CallContext {
  readonly metadata: Metadata;
  /** When the caller stops waiting (a Date or epoch ms; Infinity for never): a call passed on to another broker keeps it. */
  readonly deadline: Deadline;
  readonly trailer: AnswerTrailer;
  /** Which queues the caller may learn of (set by authentication); every queue when unset. */
  readonly canSee?: (queue: string) => boolean;
  /**
   * Who the call comes from, when its wire authenticated it already (the SQS
   * endpoint checks signatures); a gRPC call carries its token in metadata
   * instead, and authorization sets it here for the handlers. Unset without
   * authentication (no --auth-file).
   */
  readonly caller?: Principal;
}
