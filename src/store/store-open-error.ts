/** Why a data directory could not be opened, in words an operator can act on. */
export class StoreOpenError extends Error {
  override readonly name = "StoreOpenError";
}

/**
 * Translates classic-level's open failures (which say only "Database failed
 * to open" and hide the reason in `cause`) into one clear message.
 */
export function translateOpenError(dataDir: string, error: unknown): StoreOpenError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === "LEVEL_LOCKED") {
    return new StoreOpenError(`data directory ${dataDir} is in use by another holdshelf process`, { cause: error });
  }
  const detail = cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new StoreOpenError(`cannot open data directory ${dataDir}: ${detail}`, { cause: error });
}
