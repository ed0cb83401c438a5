/**
 * The errors of the SQS endpoint, as SQS clients read them: the JSON
 * protocol's error shape (`__type`), the query protocol's legacy code, the
 * HTTP status, and whether the sender or the server is at fault. Both wires
 * render the same SqsError (src/sqs/protocol/).
 */
export class SqsError extends Error {
  override readonly name = "SqsError";

  constructor(
    /** The error shape of the JSON protocol, e.g. "QueueDoesNotExist" (sent as com.amazonaws.sqs#<shape>). */
    readonly shape: string,
    /** The query protocol's code, also sent on JSON as x-amzn-query-error: clients report this one. */
    readonly legacyCode: string,
    readonly httpStatus: number,
    message: string,
    /** "Sender" for the caller's mistakes, "Receiver" for the broker's own trouble. */
    readonly fault: "Sender" | "Receiver" = "Sender",
    /** The message on the query protocol, where AWS words an error differently from JSON's; the same when unset. */
    readonly queryMessage: string = message,
  ) {
    super(message);
  }
}

// The shapes whose legacy code is AWS.SimpleQueueService.<shape> (sqs-compat-notes, "Errors").
const prefixedShape = (shape: string, message: string, status = 400): SqsError =>
  new SqsError(shape, `AWS.SimpleQueueService.${shape}`, status, message);
const plainShape = (shape: string, message: string, status = 400): SqsError =>
  new SqsError(shape, shape, status, message);

/** Every error the endpoint sends, by what went wrong. */
export const sqsErrors = {
  /** AWS's words differ by protocol: the query protocol's still name the WSDL version. */
  queueDoesNotExist: () =>
    new SqsError(
      "QueueDoesNotExist",
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
      "The specified queue does not exist.",
      "Sender",
      "The specified queue does not exist for this wsdl version.",
    ),
  queueNameExists: (message: string) => new SqsError("QueueNameExists", "QueueAlreadyExists", 400, message),
  invalidParameterValue: (message: string) =>
    new SqsError("InvalidParameterValueException", "InvalidParameterValue", 400, message),
  missingParameter: (message: string) =>
    new SqsError("MissingRequiredParameterException", "MissingParameter", 400, message),
  invalidAttributeName: (message: string) => plainShape("InvalidAttributeName", message),
  invalidAttributeValue: (message: string) => plainShape("InvalidAttributeValue", message),
  receiptHandleIsInvalid: (message: string) => plainShape("ReceiptHandleIsInvalid", message),
  invalidMessageContents: (message: string) => plainShape("InvalidMessageContents", message),
  resourceNotFound: (message: string) => plainShape("ResourceNotFoundException", message),
  overLimit: (message: string) => plainShape("OverLimit", message, 403),
  purgeQueueInProgress: (message: string) => prefixedShape("PurgeQueueInProgress", message, 403),
  tooManyEntriesInBatchRequest: (message: string) => prefixedShape("TooManyEntriesInBatchRequest", message),
  batchEntryIdsNotDistinct: (message: string) => prefixedShape("BatchEntryIdsNotDistinct", message),
  batchRequestTooLong: (message: string) => prefixedShape("BatchRequestTooLong", message),
  emptyBatchRequest: (message: string) => prefixedShape("EmptyBatchRequest", message),
  invalidBatchEntryId: (message: string) => prefixedShape("InvalidBatchEntryId", message),
  unsupportedOperation: (message: string) => prefixedShape("UnsupportedOperation", message),
  /** A query request that names no action. */
  missingAction: () =>
    new SqsError("MissingAction", "MissingAction", 400, "The request must contain the parameter Action."),
  /** An action SQS does not have (or this endpoint does not know). */
  invalidAction: (action: string) =>
    new SqsError("InvalidAction", "InvalidAction", 400, `The action ${action} is not valid for this endpoint.`),
  /** A request neither wire protocol can read (no action, a body that is not JSON or a form). */
  malformedRequest: (message: string) => new SqsError("MalformedQueryString", "MalformedQueryString", 400, message),
  /** A body over the listener's limit. */
  requestTooLarge: (limit: number) =>
    new SqsError("RequestEntityTooLarge", "RequestEntityTooLarge", 413, `The request body is over ${limit} bytes.`),
  // Authentication, as AWS answers it (src/sqs/auth/).
  missingAuthenticationToken: () =>
    new SqsError(
      "MissingAuthenticationTokenException",
      "MissingAuthenticationToken",
      403,
      "Request is missing Authentication Token",
    ),
  invalidClientTokenId: () =>
    new SqsError(
      "InvalidClientTokenId",
      "InvalidClientTokenId",
      403,
      "The security token included in the request is invalid.",
    ),
  signatureDoesNotMatch: (message = "The request signature we calculated does not match the signature you provided.") =>
    new SqsError("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403, message),
  incompleteSignature: (message: string) => new SqsError("IncompleteSignature", "IncompleteSignature", 400, message),
  requestExpired: (message: string) => new SqsError("RequestExpired", "RequestExpired", 400, message),
  accessDenied: (message: string) => new SqsError("AccessDenied", "AccessDenied", 403, message),
  /** The broker cannot serve now (storage down, shutting down, queue moving): clients retry 5xx. */
  serviceUnavailable: (message: string) =>
    new SqsError("ServiceUnavailable", "ServiceUnavailable", 503, message, "Receiver"),
  internalError: () =>
    new SqsError(
      "InternalError",
      "InternalError",
      500,
      "We encountered an internal error. Please try again.",
      "Receiver",
    ),
} as const;
