import type { ServiceError } from "@grpc/grpc-js";
import { RpcError } from "../client/rpc-error.js";
import { ForwardedStatus } from "../grpc/forwarding/forwarded-status.js";
import type { FieldViolation } from "../protocol/error-reasons.js";
import { HoldshelfError } from "./holdshelf-error.js";

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
    const { reason, message, violations } = RpcError.fromServiceError({
      code: error.code,
      details: error.details,
      metadata: error.metadata,
    } as ServiceError);
    return { reason, message, violations };
  }
  return undefined;
}
