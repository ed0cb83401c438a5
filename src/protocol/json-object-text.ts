/**
 * Whether a text is a JSON object (not an array, a string or null): what a
 * queue's access policy must be, on gRPC and on SQS alike.
 */
export function isJsonObjectText(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
}
