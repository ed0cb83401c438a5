import { HoldshelfError } from "../errors/holdshelf-error.js";
import { statusDetailsKey, type FieldViolation } from "../protocol/error-reasons.js";
import { decodeStatusDetails } from "../protocol/status-details.js";
import { ForwardedStatus } from "./forwarded-status.js";

/** A broker error's stable reason and message, whether this broker or the queue's owner (cluster mode) answered. */
export interface BrokerFailure {
  readonly reason: string;
  readonly message: string;
  /** The request fields at fault, by their proto paths ("entries[2].delay"). */
  readonly violations: readonly FieldViolation[];
}

/** The reason of a broker error, or undefined for anything else (a bug, to be logged). */
export function brokerFailure(error: unknown): BrokerFailure | undefined {
  if (error instanceof HoldshelfError) return error;
  if (error instanceof ForwardedStatus) {
    const [details] = error.metadata.get(statusDetailsKey);
    return { ...decodeStatusDetails(details instanceof Buffer ? details : undefined), message: error.details };
  }
  return undefined;
}
