import type { Metadata } from "@grpc/grpc-js";

/**
 * The error status a queue's owner answered a forwarded call with, passed
 * back to the caller as it came: its code, message and trailers (with the
 * status details that carry the reason), as if the caller had asked the
 * owner itself.
 */
export class ForwardedStatus extends Error {
  override readonly name = "ForwardedStatus";

  constructor(
    readonly code: number,
    readonly details: string,
    readonly metadata: Metadata,
  ) {
    super(details);
  }
}
