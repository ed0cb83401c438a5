import type { ServiceError } from "@grpc/grpc-js";
import type { FieldViolation } from "../protocol/error-reasons.js";
import { statusDetailsKey } from "../protocol/error-reasons.js";
import { decodeStatusDetails } from "../protocol/status-details.js";

/** A failed call, as a client sees it: the gRPC code, the stable reason, and any violated fields. */
export class RpcError extends Error {
  override readonly name = "RpcError";

  constructor(
    readonly code: number,
    /** The ErrorInfo reason, e.g. QUEUE_NOT_FOUND; empty if the server sent none. */
    readonly reason: string,
    message: string,
    readonly violations: readonly FieldViolation[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** Reads a grpc-js error, with the google.rpc.Status details it may carry. */
  static fromServiceError(error: ServiceError): RpcError {
    const [details] = error.metadata?.get(statusDetailsKey) ?? [];
    const { reason, violations } = decodeStatusDetails(details instanceof Buffer ? details : undefined);
    return new RpcError(error.code, reason, error.details, violations, { cause: error });
  }
}
