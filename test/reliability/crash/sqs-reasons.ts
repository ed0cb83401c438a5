/**
 * The holdshelf reason an SQS error answer stands for, so the ledger judges
 * SQS answers by the rules it judges gRPC ones by; undefined for a call
 * that got no answer (a broken connection). The endpoint words some
 * refusals its own way (src/sqs/actions/message-actions.ts); clients read
 * the query protocol's code, which the SDK puts in `Code`.
 */
export function sqsErrorReason(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { Code, name, message, $metadata } = error as {
    Code?: string;
    name: string;
    message: string;
    $metadata?: { httpStatusCode?: number };
  };
  // Only an HTTP answer carries a status: a broken connection has none.
  if ($metadata?.httpStatusCode === undefined) return undefined;
  return sqsEntryReason(Code ?? name, message);
}

/** The SQS code all of the endpoint's "cannot serve now" reasons share (STORAGE_UNAVAILABLE among them). */
export const SQS_UNAVAILABLE = "ServiceUnavailable";

/** The holdshelf reason of a failed batch entry's Code and Message (or a failed call's); the code itself if none fits. */
export function sqsEntryReason(code: string, message: string): string {
  switch (code) {
    case "ReceiptHandleIsInvalid":
      return "RECEIPT_HANDLE_INVALID";
    case "InternalError":
      return "INTERNAL";
    case "InvalidParameterValue":
      if (message.includes("Message does not exist or is not available for visibility timeout change"))
        return "MESSAGE_NOT_FOUND";
      if (message.includes("Total VisibilityTimeout for the message is beyond the limit"))
        return "LEASE_LIMIT_EXCEEDED";
      return code;
    default:
      return code;
  }
}
