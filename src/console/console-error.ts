import { Code, reasonCodes } from "../protocol/error-reasons.js";
import { brokerFailure } from "../service/broker-failure.js";

/**
 * One refused field as the console answers it: its proto path
 * ("config.visibility_timeout"), a stable reason, and words for the operator
 * to read beside the field. The reasons are the console's own for a value it
 * could not read (fieldReasons), or the broker's error reason for a value it refused.
 */
export interface ConsoleFieldError {
  readonly field: string;
  readonly reason: string;
  readonly message: string;
}

/** Why the console could not read a field's value: stable, for tests and scripts to match. */
export const fieldReasons = {
  /** Empty, where a value is needed. */
  required: "REQUIRED",
  /** Not a duration such as 30, 500ms, 5m or 1h30m. */
  notADuration: "NOT_A_DURATION",
  /** Not a whole number, or one too large to send. */
  notAWholeNumber: "NOT_A_WHOLE_NUMBER",
  /** Not one of the field's choices. */
  notAChoice: "NOT_A_CHOICE",
  /** A key that names no setting. */
  unknownField: "UNKNOWN_FIELD",
  /** Text where an object is needed, a number where text is, and the like. */
  wrongType: "WRONG_TYPE",
  /** A request body that is cut off, or not UTF-8 or JSON. */
  malformed: "MALFORMED",
} as const;

/** A console API failure: an HTTP status and the body `{"error": {reason, message, fields}}`. */
export class ConsoleError extends Error {
  override readonly name = "ConsoleError";

  constructor(
    readonly status: number,
    // A string, not a union of the console's reasons: a broker's reason passes through, and an owner in
    // cluster mode may send one this broker does not know. consoleErrors below lists the console's own.
    readonly reason: string,
    message: string,
    readonly fields: readonly ConsoleFieldError[] = [],
  ) {
    super(message);
  }

  toJson(): { error: { reason: string; message: string; fields: readonly ConsoleFieldError[] } } {
    return { error: { reason: this.reason, message: this.message, fields: this.fields } };
  }
}

/** The console's own refusals, one place for their statuses and wording. */
export const consoleErrors = {
  sessionRequired: (message = "sign in with an access token") => new ConsoleError(401, "SESSION_REQUIRED", message),
  csrf: () =>
    new ConsoleError(
      403,
      "CSRF_TOKEN_INVALID",
      "the request lacks this session's X-Holdshelf-Csrf header: reload the page",
    ),
  hostNotAllowed: (host: string) =>
    new ConsoleError(
      421,
      "HOST_NOT_ALLOWED",
      `this console answers only requests for its own address or localhost, not "${host.slice(0, 100)}": without --auth-file, other names could be a DNS rebinding`,
    ),
  notFound: () => new ConsoleError(404, "NOT_FOUND", "no such page or API"),
  methodNotAllowed: () => new ConsoleError(405, "METHOD_NOT_ALLOWED", "that method is not allowed here"),
  unsupportedMediaType: () =>
    new ConsoleError(415, "UNSUPPORTED_MEDIA_TYPE", "send the request body as application/json"),
  tooLarge: (limit: number) => new ConsoleError(413, "REQUEST_TOO_LARGE", `the request body is over ${limit} bytes`),
  invalid: (field: string, message: string, reason: string = fieldReasons.wrongType) =>
    consoleErrors.invalidFields([{ field, reason, message }]),
  /** INVALID_ARGUMENT naming every field at once, as the broker's refusals do. */
  invalidFields: (fields: readonly ConsoleFieldError[]) =>
    new ConsoleError(
      400,
      "INVALID_ARGUMENT",
      fields.map(({ field, message }) => `${field}: ${message}`).join("; "),
      fields,
    ),
} as const;

// The HTTP status of each gRPC code the broker answers with.
const httpStatusOfCode: Record<number, number> = {
  [Code.INVALID_ARGUMENT]: 400,
  [Code.NOT_FOUND]: 404,
  [Code.ALREADY_EXISTS]: 409,
  [Code.PERMISSION_DENIED]: 403,
  [Code.RESOURCE_EXHAUSTED]: 429,
  [Code.FAILED_PRECONDITION]: 409,
  [Code.UNAVAILABLE]: 503,
  [Code.UNAUTHENTICATED]: 401,
  [Code.CANCELLED]: 499,
};

/**
 * The console's answer to a failure: a broker error keeps its reason,
 * message and fields (this broker's or the queue owner's); anything else
 * is INTERNAL, and `logUnexpected` hears of it.
 */
export function toConsoleError(error: unknown, logUnexpected: (error: unknown) => void): ConsoleError {
  if (error instanceof ConsoleError) return error;
  const failure = brokerFailure(error);
  if (failure === undefined || failure.reason === "INTERNAL" || failure.reason === "") {
    logUnexpected(error);
    return new ConsoleError(500, "INTERNAL", "the broker failed unexpectedly; its log has the details");
  }
  const code = (reasonCodes as Record<string, number>)[failure.reason];
  return new ConsoleError(
    code === undefined ? 500 : (httpStatusOfCode[code] ?? 500),
    failure.reason,
    failure.message,
    failure.violations.map(({ field, description }) => ({ field, reason: failure.reason, message: description })),
  );
}
