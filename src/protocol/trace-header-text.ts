import { maxTraceHeaderCharacters } from "./limits.js";

// Printable ASCII: what X-Ray and W3C trace headers are made of, and what
// both of holdshelf's APIs carry unchanged (SQS's XML included).
const traceHeaderPattern = /^[\x20-\x7e]+$/;

/**
 * Whether a message's trace header (SQS's AWSTraceHeader) is one holdshelf
 * stores: 1 to maxTraceHeaderCharacters characters of printable ASCII. The
 * broker checks it on both APIs; the SQS endpoint first, to answer in SQS's
 * words and to drop a request header the broker would refuse.
 */
export function isTraceHeaderText(text: string): boolean {
  return text.length <= maxTraceHeaderCharacters && traceHeaderPattern.test(text);
}
