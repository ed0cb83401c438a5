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

/**
 * Storage written in a format newer than this holdshelf reads: a data
 * directory's format or a cluster database's layout. Refused before
 * anything is written, so the newer release that wrote it can still open it.
 */
export class FormatTooNewError extends StoreOpenError {
  /** Stable, for scripts and logs: the message's words may change, this does not. */
  readonly code = "DATA_FORMAT_TOO_NEW";

  constructor(
    /** What holds it, as the message names it: `data directory ./data` or `the cluster's database`. */
    where: string,
    /** What the version numbers: a data directory's `data format`, a cluster database's `layout`. */
    kind: "data format" | "layout",
    /** The format found. */
    readonly found: number,
    /** The newest format this holdshelf reads. */
    readonly known: number,
  ) {
    super(
      `${where} is in holdshelf ${kind} ${found}, newer than ${kind} ${known}, the newest this holdshelf reads: ` +
        `run a holdshelf release that reads ${kind} ${found} (docs/upgrading.md). Nothing was changed`,
    );
  }
}
