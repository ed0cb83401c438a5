import type { StoreOp } from "../store/store.js";
import type { LiveMessage } from "./queue-state.js";

/** The write that removes a message: its content, index entry and any checkpoint. */
export function removeMessageOp(dataId: number, message: LiveMessage): StoreOp {
  return { kind: "removeMessage", dataId, id: message.id, readyAt: message.readyAt, hasCheckpoint: message.hasCheckpoint };
}

/** The write that moves a message's index entry from `fromReadyAt` to its current ready time and state. */
export function rescheduleOp(dataId: number, fromReadyAt: number, message: LiveMessage): StoreOp {
  return { kind: "reschedule", dataId, fromReadyAt, entry: message };
}
