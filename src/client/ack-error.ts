import { Code, reasonCodes } from "../protocol/error-reasons.js";
import { RpcError } from "./rpc-error.js";
import type { AckResult } from "./types.js";

/** A refused ack as the error a unary Delete would have failed with: the reason's code and the reason. */
export function ackError(result: AckResult): RpcError {
  const code: number = (reasonCodes as Readonly<Record<string, number>>)[result.reason] ?? Code.FAILED_PRECONDITION;
  return new RpcError(code, result.reason, `the broker refused the ack of this message: ${result.reason}`);
}
