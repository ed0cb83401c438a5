import { type SqsError, sqsErrors } from "../sqs-error.js";
import { structureList, type SqsInput } from "../sqs-input.js";

/** SQS's limit of entries in one batch. */
export const maxBatchEntries = 10;

const entryIdPattern = /^[A-Za-z0-9_-]{1,80}$/;

/** One entry of a batch, with the Id the answer reports it under. */
export interface BatchEntry {
  readonly id: string;
  readonly input: SqsInput;
}

/** A failed entry as the answer reports it (BatchResultErrorEntry). */
export interface BatchFailure {
  readonly Id: string;
  readonly SenderFault: boolean;
  readonly Code: string;
  readonly Message: string;
}

/**
 * The entries of a batch request, checked as SQS checks the whole batch:
 * 1 to 10 entries (EmptyBatchRequest, TooManyEntriesInBatchRequest), each
 * with an Id of alphanumerics, "-" and "_" up to 80 characters
 * (InvalidBatchEntryId), all distinct (BatchEntryIdsNotDistinct).
 */
export function batchEntries(input: SqsInput, member: string, entryName: string): BatchEntry[] {
  const entries = structureList(input, member);
  if (entries.length === 0)
    throw sqsErrors.emptyBatchRequest(`There should be at least one ${entryName} in the request.`);
  if (entries.length > maxBatchEntries) {
    throw sqsErrors.tooManyEntriesInBatchRequest(
      `Maximum number of entries per request are ${maxBatchEntries}. You have sent ${entries.length}.`,
    );
  }
  const seen = new Set<string>();
  return entries.map((entry) => {
    const id = entry["Id"];
    if (typeof id !== "string" || !entryIdPattern.test(id)) {
      throw sqsErrors.invalidBatchEntryId(
        "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
      );
    }
    if (seen.has(id)) throw sqsErrors.batchEntryIdsNotDistinct(`Id ${id} repeated.`);
    seen.add(id);
    return { id, input: entry };
  });
}

/** An entry's failure for the answer: the SQS error's legacy code, which both wires report in batch results. */
export function batchFailure(id: string, error: SqsError): BatchFailure {
  return { Id: id, SenderFault: error.fault === "Sender", Code: error.legacyCode, Message: error.message };
}
