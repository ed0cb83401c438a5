import { invalidArgument } from "../errors/holdshelf-error.js";
import { maxTraceHeaderCharacters } from "../protocol/limits.js";
import { isTraceHeaderText } from "../protocol/trace-header-text.js";

/**
 * Checks a message's trace header (SQS's AWSTraceHeader) and returns it as
 * stored: undefined for none (empty). `field` is the path of the message in
 * the request ("" or "entries[3]."). Throws INVALID_ARGUMENT.
 */
export function checkTraceHeader(traceHeader: string | undefined, field: string): string | undefined {
  if (traceHeader === undefined || traceHeader === "") return undefined;
  if (!isTraceHeaderText(traceHeader)) {
    throw invalidArgument(
      `${field}trace_header`,
      `must be at most ${maxTraceHeaderCharacters} characters of printable ASCII`,
    );
  }
  return traceHeader;
}
