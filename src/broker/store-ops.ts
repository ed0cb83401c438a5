import type { ScheduleEntry, StoreOp } from "../store/store.js";
import type { LiveMessage } from "./message-table.js";

/** The write that removes a message: its content, index entry and any checkpoint. */
export function removeMessageOp(dataId: number, message: LiveMessage): StoreOp {
  return {
    kind: "removeMessage",
    dataId,
    id: message.id,
    readyAt: message.readyAt,
    hasCheckpoint: message.hasCheckpoint,
  };
}

/**
 * The write that moves a message's index entry from `fromReadyAt` to its current ready time and state.
 * It carries the entry itself (a rule's: the live message), which the rules change again while the
 * write is under way: correct because Store.commit reads every op before it
 * returns (its contract, tested in test/store/store-contract.ts). A rule
 * stated once covers every op (message bodies too), where a copy here would
 * cover this op alone.
 */
export function rescheduleOp(dataId: number, fromReadyAt: number, entry: ScheduleEntry): StoreOp {
  return { kind: "reschedule", dataId, fromReadyAt, entry };
}
