import { expect } from "vitest";
import { RpcError } from "../../src/client/rpc-error.js";

/** Awaits a call that must fail, and checks its gRPC code, stable reason and (optionally) violated field. */
export async function expectRpcError(
  call: Promise<unknown>,
  code: number,
  reason: string,
  field?: string,
): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `expected ${reason}`).toBeInstanceOf(RpcError);
  const rpcError = error as RpcError;
  expect({ code: rpcError.code, reason: rpcError.reason }).toEqual({ code, reason });
  if (field !== undefined) expect(rpcError.violations.map((v) => v.field)).toContain(field);
  return rpcError;
}
