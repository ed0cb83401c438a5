import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import type { ServiceError } from "@grpc/grpc-js";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import type { FieldViolation } from "../protocol/error-reasons.js";
import { statusDetailsKey } from "../protocol/error-reasons.js";

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
    let reason = "";
    const violations: FieldViolation[] = [];
    if (details instanceof Buffer) {
      const status = fromBinary(StatusSchema, details);
      for (const any of status.details) {
        const info = anyUnpack(any, ErrorInfoSchema);
        if (info) reason = info.reason;
        const badRequest = anyUnpack(any, BadRequestSchema);
        if (badRequest) violations.push(...badRequest.fieldViolations.map(({ field, description }) => ({ field, description })));
      }
    }
    return new RpcError(error.code, reason, error.details, violations, { cause: error });
  }
}
