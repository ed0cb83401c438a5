import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Metadata, type StatusObject } from "@grpc/grpc-js";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { errorDomain, statusDetailsKey } from "../protocol/error-reasons.js";
import { ForwardedStatus } from "./forwarding/forwarded-status.js";

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
  const details = [
    anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: known.reason, domain: errorDomain })),
  ];
  if (known.violations.length > 0) {
    details.push(
      anyPack(BadRequestSchema, create(BadRequestSchema, { fieldViolations: known.violations.map((v) => ({ ...v })) })),
    );
  }
  const status = create(StatusSchema, { code: known.code, message: known.message, details });
  const metadata = new Metadata();
  metadata.set(statusDetailsKey, Buffer.from(toBinary(StatusSchema, status)));
  return { code: known.code, details: known.message, metadata };
}
