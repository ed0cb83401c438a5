import { randomBytes } from "node:crypto";
import type { FifoFields } from "./pipeline.js";

/**
 * The FIFO fields of a pipeline run that spreads its messages over
 * `groups` message groups in turn (message n in group n mod `groups`), so
 * that every SendBatch of 100 touches min(100, `groups`) groups, each with
 * a deduplication id no other message has.
 */
export function spreadOverGroups(groups: number): (index: number) => FifoFields {
  // A prefix per run: the warm-up and the measured run share a queue and its five-minute window.
  const run = randomBytes(6).toString("hex");
  return (index) => ({ messageGroupId: `group-${index % groups}`, deduplicationId: `${run}-${index}` });
}
