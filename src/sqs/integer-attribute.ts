import { sqsErrors } from "./sqs-error.js";

/**
 * A queue attribute's whole number from `min` to `max`, read as SQS reads
 * it (surrounding spaces allowed); InvalidAttributeValue in SQS's words
 * otherwise.
 */
export function parseIntegerAttribute(name: string, value: string, min: number, max: number): number {
  const number = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(number >= min && number <= max)) {
    throw sqsErrors.invalidAttributeValue(
      `Invalid value for the parameter ${name}. Reason: Must be an integer from ${min} to ${max}.`,
    );
  }
  return number;
}
