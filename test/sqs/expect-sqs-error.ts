import { expect } from "vitest";

/**
 * Asserts that an SDK call failed with this SQS error code (as the SDK
 * reports it: the query protocol's code, which real SQS sends on both
 * wires) and HTTP status, and a message matching `message` if given.
 */
export async function expectSqsError(
  call: Promise<unknown>,
  code: string,
  httpStatus: number,
  message?: RegExp,
): Promise<void> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) =>
      failure as { name: string; Code?: string; message: string; $metadata?: { httpStatusCode?: number } },
  );
  if (error === undefined) throw new Error(`expected ${code}, but the call succeeded`);
  expect({ code: error.Code ?? error.name, status: error.$metadata?.httpStatusCode }).toEqual({
    code,
    status: httpStatus,
  });
  if (message !== undefined) expect(error.message).toMatch(message);
}
