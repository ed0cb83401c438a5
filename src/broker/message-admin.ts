import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import type { StoreOp } from "../store/store.js";
import type { CommitAndServe } from "./commit-and-serve.js";
import type { DeadLetters } from "./dead-letters.js";
import type { LeaseTracking } from "./lease-tracking.js";
import { parseMessageId } from "./message-id.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import type { RevocableStore } from "./revocable-store.js";
import { removeMessageOp } from "./store-ops.js";

/** What the per-message admin actions work on: parts of one load of the broker's memory. */
export interface MessageAdminOptions {
  readonly store: Pick<RevocableStore, "readMessages">;
  readonly leases: LeaseTracking;
  readonly deadLetters: DeadLetters;
  readonly commitAndServe: CommitAndServe;
  /** Offers a queue's freed room and groups to its waiting receives (Maintenance.advance). */
  readonly advance: (queue: QueueState) => void;
}

/**
 * An operator's actions on one message named by its id, whatever its state
 * (QueueService's DiscardMessage and MoveMessage): no receipt handle, so a
 * message in flight goes too, and its consumer's later Delete or
 * ChangeVisibility finds it gone: no departure is remembered, so a Delete
 * answers NO_LONGER_HELD, and a ChangeVisibility MESSAGE_NOT_FOUND.
 */
export interface MessageAdmin {
  /** Deletes the message; MESSAGE_NOT_FOUND if the queue does not hold it. */
  discard(queue: QueueState, messageId: string): Promise<void>;
  /**
   * Moves the message to `destinationName`, or with "" back to the queue that
   * dead-lettered it, as a redrive moves it; returns the queue it went to.
   */
  move(queue: QueueState, messageId: string, destinationName: string): Promise<string>;
}

/** The per-message admin actions over one load of the broker's memory. */
export function createMessageAdmin(options: MessageAdminOptions): MessageAdmin {
  const { store, leases, deadLetters, commitAndServe, advance } = options;

  /** Takes the message out of the queue's memory and out of any stream's tracking. */
  const takeOut = (queue: QueueState, message: LiveMessage): void => {
    queue.remove(message);
    leases.untrack(queue, message.id);
  };

  return {
    async discard(queue, messageId) {
      const message = find(queue, messageId);
      takeOut(queue, message);
      const ops: StoreOp[] = [removeMessageOp(queue.record.dataId, message)];
      await commitAndServe(queue, ops);
    },

    async move(queue, messageId, destinationName) {
      const found = find(queue, messageId);
      // Reading the content (for its dead-letter source, and to write it
      // anew) and finding the destination both wait: the message is taken
      // out of memory only after them, as it is by then.
      const [content] = await store.readMessages(queue.record.dataId, [found]);
      if (content === undefined) throw messageNotFound(queue, messageId);
      const target = await deadLetters.destination(
        destinationOf(content.deadLetter, destinationName),
        queue,
        "message's queue",
      );
      const message = queue.get(found.id);
      if (message === undefined) throw messageNotFound(queue, messageId);
      // destinationOf never answers "", the one name destination() answers undefined for.
      const to = target!;
      takeOut(queue, message);
      await deadLetters.moveOne(queue, to, message, content);
      advance(queue);
      return typeof to === "string" ? to : to.record.name;
    },
  };
}

/** The message of that id (formatMessageId's form) the queue holds: INVALID_ARGUMENT for a malformed id, else MESSAGE_NOT_FOUND. */
function find(queue: QueueState, messageId: string): LiveMessage {
  const id = parseMessageId(messageId);
  if (id === undefined) throw invalidArgument("message_id", "must be a message id (8-4-4-4-12 hex digits)");
  const message = queue.get(id);
  if (message === undefined) throw messageNotFound(queue, messageId);
  return message;
}

/** Where a move goes: the destination named, or for "" the queue that dead-lettered the message. */
function destinationOf(origin: { readonly sourceQueue: string } | undefined, destinationName: string): string {
  if (destinationName !== "") return destinationName;
  // A source queue is never stored empty; were it, it would name no queue to go back to either.
  if (origin === undefined || origin.sourceQueue === "") {
    throw invalidArgument(
      "destination_queue",
      "must name a queue: the message was not dead-lettered, so it has no source queue to go back to",
    );
  }
  return origin.sourceQueue;
}

function messageNotFound(queue: QueueState, messageId: string): HoldshelfError {
  return new HoldshelfError("MESSAGE_NOT_FOUND", `queue "${queue.record.name}" holds no message ${messageId}`);
}
