import { HoldshelfError } from "../errors/holdshelf-error.js";

// LevelDB reports an OS error as "IO error: <path>: <strerror>"; clients get
// the errno and its words, never the path.
const knownCauses: readonly [RegExp, string][] = [
  [/no space left on device/i, "ENOSPC: no space left on device"],
  [/disk quota exceeded/i, "EDQUOT: disk quota exceeded"],
  [/read-only file system/i, "EROFS: read-only file system"],
  [/input\/output error/i, "EIO: input/output error"],
  [/permission denied/i, "EACCES: permission denied"],
  [/too many open files/i, "EMFILE: too many open files"],
  [/corrupt/i, "data corruption"],
];

/**
 * STORAGE_UNAVAILABLE for a failed write: what went wrong in words an
 * operator can act on, without paths; the raw error is kept as the cause
 * (logged, never sent).
 */
export function storageUnavailable(error: unknown): HoldshelfError {
  if (isStorageUnavailable(error)) return error;
  const text = error instanceof Error ? error.message : String(error);
  const detail = knownCauses.find(([pattern]) => pattern.test(text))?.[1] ?? "I/O error";
  return new HoldshelfError(
    "STORAGE_UNAVAILABLE",
    `storage write failed (${detail}); the broker is recovering, retry later`,
    { cause: error },
  );
}

/** Whether an error is STORAGE_UNAVAILABLE (its cause was logged once, when storage went down). */
export function isStorageUnavailable(error: unknown): error is HoldshelfError {
  return error instanceof HoldshelfError && error.reason === "STORAGE_UNAVAILABLE";
}
