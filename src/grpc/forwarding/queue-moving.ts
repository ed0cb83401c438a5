import { HoldshelfError } from "../../errors/holdshelf-error.js";

/**
 * QUEUE_MOVING for a call another broker passed here on a queue this broker
 * does not serve: that broker's view of the shards was stale. Passing the
 * call on again could loop between two stale views, so a call takes one hop
 * at most, and the client's retry starts over with fresh routes.
 */
export function notServedHere(queue: string): HoldshelfError {
  return new HoldshelfError(
    "QUEUE_MOVING",
    `queue "${queue}" is not served by the broker the call was passed to (it moved); retry shortly`,
  );
}
