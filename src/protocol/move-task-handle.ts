// A message move task's handle: base64url of {"taskId":…,"sourceQueue":…},
// as Amazon SQS's handles are base64 of a small JSON naming the task and its
// source queue. Clients treat it as opaque; the broker, and the routing that
// must find the source queue's owner from the handle alone (cluster mode),
// read it here.

// Far above any handle the broker issues (an 80-character name and a UUID).
const maxHandleLength = 512;

/** What a task handle names. */
export interface MoveTaskHandle {
  readonly sourceQueue: string;
  readonly taskId: string;
}

/** The handle of the task `taskId` of `sourceQueue`. */
export function formatMoveTaskHandle(sourceQueue: string, taskId: string): string {
  return Buffer.from(JSON.stringify({ taskId, sourceQueue }), "utf8").toString("base64url");
}

/** What a handle names; undefined for a string no formatMoveTaskHandle returned. */
export function parseMoveTaskHandle(handle: string): MoveTaskHandle | undefined {
  if (handle.length === 0 || handle.length > maxHandleLength || !/^[A-Za-z0-9_-]+$/.test(handle)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(handle, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { taskId, sourceQueue } = parsed as Record<string, unknown>;
  if (typeof taskId !== "string" || typeof sourceQueue !== "string") return undefined;
  // Only the exact bytes issued: no other spelling of the same fields.
  return formatMoveTaskHandle(sourceQueue, taskId) === handle ? { sourceQueue, taskId } : undefined;
}
