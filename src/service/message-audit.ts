import type { Logger } from "../logging/logger.js";
import type { CallContext } from "./call-context.js";

/** What an operator did to one message (DiscardMessage, MoveMessage). */
export interface MessageAction {
  readonly action: "DiscardMessage" | "MoveMessage";
  readonly queue: string;
  readonly messageId: string;
  /** MoveMessage: where the message went. */
  readonly destinationQueue?: string;
}

/**
 * Writes the audit line of a per-message action once it is done: one info
 * line naming the action, queue, message, destination and the caller (the
 * auth file's name of its token or access key; null without --auth-file).
 * Only the broker that made the change writes it: a call passed on to a
 * queue's owner (cluster mode) is logged there.
 */
export function auditMessageAction(logger: Logger, context: CallContext, done: MessageAction): void {
  logger.info("message action", { ...done, caller: context.caller?.name ?? null });
}
