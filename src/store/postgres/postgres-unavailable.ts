import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { isStorageUnavailable } from "../storage-unavailable.js";

/**
 * STORAGE_UNAVAILABLE for a failed PostgreSQL write or connection: the
 * SQLSTATE or errno for an operator, no host or credentials for a client;
 * the raw error stays the cause (logged, never sent).
 */
export function postgresUnavailable(error: unknown): HoldshelfError {
  if (isStorageUnavailable(error)) return error;
  const code = (error as { code?: unknown }).code;
  const detail = typeof code === "string" ? `PostgreSQL ${code}` : "PostgreSQL unreachable";
  return new HoldshelfError("STORAGE_UNAVAILABLE", `storage write failed (${detail}); the broker is recovering, retry later`, {
    cause: error,
  });
}
