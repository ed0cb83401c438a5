// Both directions of the google.rpc.Status that rides in a failed call's
// grpc-status-details-bin trailer, in one place (connect-es keeps its
// trailer-status.ts the same way): the server encodes it, the client and the
// broker's HTTP wires (reading an owner's forwarded failure) decode it.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { errorDomain, type FieldViolation } from "./error-reasons.js";

/** What a failed call's status details say: its code and message, the stable reason, and the request fields at fault. */
export interface StatusDetails {
  readonly code: number;
  readonly message: string;
  /** The ErrorInfo reason, e.g. QUEUE_NOT_FOUND; empty if the details carry none. */
  readonly reason: string;
  readonly violations: readonly FieldViolation[];
}

/** The trailer's bytes: a google.rpc.Status with an ErrorInfo for the reason, and a BadRequest when fields are at fault. */
export function encodeStatusDetails({ code, message, reason, violations }: StatusDetails): Buffer {
  const details = [anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason, domain: errorDomain }))];
  if (violations.length > 0) {
    details.push(
      anyPack(BadRequestSchema, create(BadRequestSchema, { fieldViolations: violations.map((v) => ({ ...v })) })),
    );
  }
  return Buffer.from(toBinary(StatusSchema, create(StatusSchema, { code, message, details })));
}

/** The reason and violated fields of the trailer's bytes; an empty reason and no fields when there are no bytes. */
export function decodeStatusDetails(bytes: Uint8Array | undefined): Pick<StatusDetails, "reason" | "violations"> {
  let reason = "";
  const violations: FieldViolation[] = [];
  if (bytes === undefined) return { reason, violations };
  for (const any of fromBinary(StatusSchema, bytes).details) {
    const info = anyUnpack(any, ErrorInfoSchema);
    if (info) reason = info.reason;
    const badRequest = anyUnpack(any, BadRequestSchema);
    if (badRequest)
      violations.push(...badRequest.fieldViolations.map(({ field, description }) => ({ field, description })));
  }
  return { reason, violations };
}
