/**
 * Thrown by a Consumer handler to have its message delivered again no sooner
 * than retryDelayMs from now. The Consumer honours any thrown value with a
 * numeric retryDelayMs, so an application's own error classes can carry one.
 */
export class RetryLater extends Error {
  override readonly name = "RetryLater";

  constructor(
    readonly retryDelayMs: number,
    message = `retry in ${retryDelayMs} ms`,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The delay a handler's failure asks for, whole milliseconds; undefined when
 * it names none, so that the queue's retry backoff applies.
 */
export function retryDelayOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("retryDelayMs" in error)) return undefined;
  const { retryDelayMs } = error;
  if (typeof retryDelayMs !== "number" || !Number.isFinite(retryDelayMs)) return undefined;
  return Math.max(0, Math.ceil(retryDelayMs));
}
