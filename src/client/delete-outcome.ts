import { DeleteOutcome as WireDeleteOutcome } from "../../gen/holdshelf/v1/message_pb.js";
import type { DeleteOutcome, LeaseReason } from "./types.js";

const outcomes: Readonly<Record<WireDeleteOutcome, DeleteOutcome>> = {
  [WireDeleteOutcome.UNSPECIFIED]: "unspecified",
  [WireDeleteOutcome.DELETED]: "deleted",
  [WireDeleteOutcome.ALREADY_DELETED]: "already-deleted",
  [WireDeleteOutcome.DEAD_LETTERED]: "dead-lettered",
  [WireDeleteOutcome.RECEIVED_AGAIN]: "received-again",
  [WireDeleteOutcome.NO_LONGER_HELD]: "no-longer-held",
};

/** A delete's outcome as the wire says it; one newer than this client reads as "no-longer-held", the cautious guess. */
export function deleteOutcomeFromWire(outcome: WireDeleteOutcome): DeleteOutcome {
  return outcomes[outcome] ?? "no-longer-held";
}

/**
 * The lost lease a delete's outcome reveals, as a LeaseLostError's reason
 * (DEAD_LETTERED, RECEIVED_AGAIN), or undefined if the delete took effect or
 * cannot say it did not ("no-longer-held": a purge, or a broker restarted
 * since, which a Consumer does not count as lost).
 */
export function leaseLostBeforeDelete(outcome: DeleteOutcome): LeaseReason | undefined {
  if (outcome === "dead-lettered") return "DEAD_LETTERED";
  if (outcome === "received-again") return "RECEIVED_AGAIN";
  return undefined;
}
