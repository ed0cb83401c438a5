import { Code, reasonCodes, type FieldViolation } from "../protocol/error-reasons.js";
import { brokerFailure } from "../service/broker-failure.js";

/** A console API failure: an HTTP status and the body `{"error": {reason, message, fields}}`. */
export class ConsoleError extends Error {
  override readonly name = "ConsoleError";

  constructor(
    readonly status: number,
    // A string, not a union of the console's reasons: a broker's reason passes through, and an owner in
    // cluster mode may send one this broker does not know. consoleErrors below lists the console's own.
    readonly reason: string,
    message: string,
    readonly fields: readonly FieldViolation[] = [],
  ) {
    super(message);
  }

  toJson(): { error: { reason: string; message: string; fields: readonly FieldViolation[] } } {
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
  invalid: (field: string, description: string) =>
    new ConsoleError(400, "INVALID_ARGUMENT", `${field}: ${description}`, [{ field, description }]),
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
    failure.violations,
  );
}
