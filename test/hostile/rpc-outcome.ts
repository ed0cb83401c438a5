import { reasonCodes, type Reason } from "../../src/protocol/error-reasons.js";
import type { RpcError } from "../../src/client/rpc-error.js";

// Codes a QueueService call may fail with for anything a client sends; never
// INTERNAL, UNKNOWN, UNIMPLEMENTED, DEADLINE_EXCEEDED or UNAVAILABLE.
const acceptableCodes = new Set([3, 5, 6, 8, 9]);
const invalidArgumentCode = 3;

/**
 * Why a rejection breaks the error model, or undefined if it keeps it: an
 * acceptable code, a holdshelf reason that matches it, and for
 * INVALID_ARGUMENT a field violation naming a field.
 */
export function rejectionProblem(error: RpcError): string | undefined {
  const seen = `${error.code} ${error.reason || "(no reason)"}: ${error.message}`;
  if (!acceptableCodes.has(error.code)) return `unacceptable code: ${seen}`;
  if (!(error.reason in reasonCodes)) return `no holdshelf reason: ${seen}`;
  if (reasonCodes[error.reason as Reason] !== error.code) return `reason does not match the code: ${seen}`;
  if (error.code === invalidArgumentCode && !error.violations.some((v) => v.field !== "" && v.description !== "")) {
    return `INVALID_ARGUMENT without a field violation: ${seen}`;
  }
  return undefined;
}

/** Why a batch entry's result breaks the error model (INTERNAL, a reason that does not match its code), or undefined. */
export function entryProblem(entry: { code: number; reason: string; message: string }): string | undefined {
  if (entry.code === 0) return entry.reason === "" ? undefined : `OK entry with a reason: ${entry.reason}`;
  const seen = `${entry.code} ${entry.reason}: ${entry.message}`;
  if (!acceptableCodes.has(entry.code)) return `unacceptable entry code: ${seen}`;
  if (reasonCodes[entry.reason as Reason] !== entry.code) return `entry reason does not match its code: ${seen}`;
  return undefined;
}
