import { Metadata, type StatusObject } from "@grpc/grpc-js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { statusDetailsKey } from "../protocol/error-reasons.js";
import { encodeStatusDetails } from "../protocol/status-details.js";
import { ForwardedStatus } from "../service/forwarded-status.js";

/**
 * Turns any error into the status a client receives. A HoldshelfError keeps
 * its code, message and reason; another broker's status (a forwarded call's)
 * goes back as it came; anything else is INTERNAL with a fixed message (no
 * stack or detail leaves the server) and goes to `logUnexpected`.
 */
export function toErrorStatus(error: unknown, logUnexpected: (error: unknown) => void): StatusObject {
  if (error instanceof ForwardedStatus) return { code: error.code, details: error.details, metadata: error.metadata };
  let known: HoldshelfError;
  if (error instanceof HoldshelfError) {
    known = error;
  } else {
    logUnexpected(error);
    known = new HoldshelfError("INTERNAL", "internal error");
  }
  const metadata = new Metadata();
  metadata.set(statusDetailsKey, encodeStatusDetails(known));
  return { code: known.code, details: known.message, metadata };
}
