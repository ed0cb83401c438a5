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

/** The delay a handler's failure asks for; 0 (release at once) when it names none. */
export function retryDelayOf(error: unknown): number {
  if (typeof error !== "object" || error === null || !("retryDelayMs" in error)) return 0;
  const { retryDelayMs } = error;
  return typeof retryDelayMs === "number" && Number.isFinite(retryDelayMs) && retryDelayMs > 0 ? retryDelayMs : 0;
}
