import type { IncomingHttpHeaders } from "node:http";
import { sqsErrors, type SqsError } from "../sqs-error.js";

/** The JSON 1.0 protocol's content type. */
export const jsonContentType = "application/x-amz-json-1.0";
const targetPrefix = "AmazonSQS.";

/** Whether a request speaks the JSON protocol: it names its action in X-Amz-Target, or says it sends amz-json. */
export function isJsonRequest(headers: IncomingHttpHeaders): boolean {
  return headers["x-amz-target"] !== undefined || (headers["content-type"] ?? "").includes("amz-json");
}

/** A JSON protocol request's action (X-Amz-Target: AmazonSQS.<Action>) and input (the body, a JSON object; empty means {}). */
export function decodeJsonRequest(
  headers: IncomingHttpHeaders,
  body: Buffer,
): { action: string; input: Record<string, unknown> } {
  const action = actionOfTarget(headers["x-amz-target"]);
  if (action === "")
    throw sqsErrors.malformedRequest("The X-Amz-Target header must name an action: AmazonSQS.<Action>.");
  if (body.length === 0) return { action, input: {} };
  let input: unknown;
  try {
    input = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw sqsErrors.malformedRequest("The request body is not valid UTF-8 JSON.");
  }
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw sqsErrors.malformedRequest("The request body must be a JSON object.");
  return { action, input: input as Record<string, unknown> };
}

/** The action an X-Amz-Target header names (AmazonSQS.<Action>), or "" if it names none. */
export function actionOfTarget(target: string | string[] | undefined): string {
  return typeof target === "string" && target.startsWith(targetPrefix) ? target.slice(targetPrefix.length) : "";
}

/** A successful answer's body. */
export function encodeJsonResponse(output: Record<string, unknown>): string {
  return JSON.stringify(output);
}

/**
 * An error's body and headers: `__type` names the shape, and
 * x-amzn-query-error carries the legacy code, which the SDKs then report as
 * the error's code (as real SQS does).
 */
export function encodeJsonError(error: SqsError): { body: string; headers: Record<string, string> } {
  return {
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${error.shape}`, message: error.message }),
    headers: { "x-amzn-query-error": `${error.legacyCode};${error.fault}` },
  };
}
