import { reasonCodes, type Code, type FieldViolation, type Reason } from "../protocol/error-reasons.js";

/** Optional parts of a HoldshelfError. */
export interface HoldshelfErrorOptions {
  readonly violations?: readonly FieldViolation[];
  /** Logged by the server, never sent to a client. */
  readonly cause?: unknown;
}

/**
 * The one error class of holdshelf: a stable reason, the gRPC code it is sent
 * with, a message for people and, for bad arguments, the violated fields.
 */
export class HoldshelfError extends Error {
  override readonly name = "HoldshelfError";
  readonly code: Code;
  readonly violations: readonly FieldViolation[];

  constructor(
    readonly reason: Reason,
    message: string,
    options: HoldshelfErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = reasonCodes[reason];
    this.violations = options.violations ?? [];
  }
}

/** An INVALID_ARGUMENT error naming one bad field. */
export function invalidArgument(field: string, description: string): HoldshelfError {
  return new HoldshelfError("INVALID_ARGUMENT", `${field}: ${description}`, {
    violations: [{ field, description }],
  });
}

/** QUEUE_NOT_FOUND for the named queue. */
export function queueNotFound(name: string): HoldshelfError {
  return new HoldshelfError("QUEUE_NOT_FOUND", `queue "${name}" does not exist`);
}
