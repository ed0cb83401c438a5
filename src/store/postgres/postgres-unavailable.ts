import { HoldshelfError } from "../../errors/holdshelf-error.js";
import { isStorageUnavailable } from "../storage-unavailable.js";
import { FormatTooNewError } from "../store-open-error.js";
import { ShardsHeldError } from "./shard-ownership.js";

/**
 * STORAGE_UNAVAILABLE for a failed PostgreSQL write or connection, or for
 * a broker standing by while another holds its shards: the
 * SQLSTATE or errno for an operator, no host or credentials for a client;
 * the raw error stays the cause (logged, never sent).
 */
export function postgresUnavailable(error: unknown, what: "write" | "read" = "write"): HoldshelfError {
  if (isStorageUnavailable(error)) return error;
  // Names no host: what the operator must do, as the broker's start says it.
  if (error instanceof FormatTooNewError)
    return new HoldshelfError("STORAGE_UNAVAILABLE", error.message, { cause: error });
  if (error instanceof ShardsHeldError) {
    return new HoldshelfError(
      "STORAGE_UNAVAILABLE",
      `standing by: ${error.message}; serving again once they are free`,
      {
        cause: error,
      },
    );
  }
  const code = (error as { code?: unknown }).code;
  const detail = typeof code === "string" ? `PostgreSQL ${code}` : "PostgreSQL unreachable";
  return new HoldshelfError(
    "STORAGE_UNAVAILABLE",
    `storage ${what} failed (${detail}); the broker is recovering, retry later`,
    {
      cause: error,
    },
  );
}
