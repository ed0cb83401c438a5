// How the console words a FIFO queue's settings: short in the queue list,
// whole on the queue page, and as the forms label them.
import type { FifoSettings } from "./api-types.js";

/** The deduplication scopes as the forms offer them. */
export const scopeChoices: readonly {
  readonly value: FifoSettings["deduplicationScope"];
  readonly label: string;
  readonly help: string;
}[] = [
  { value: "queue", label: "Queue", help: "An id repeated in any group of the queue is a duplicate." },
  {
    value: "messageGroup",
    label: "Message group",
    help: "Only an id repeated in the same group is (for many busy groups).",
  },
];

/** The queue list's words for a queue's type: "FIFO", "FIFO · content dedup · dedup per group". */
export function fifoTag(fifo: FifoSettings): string {
  return [
    "FIFO",
    ...(fifo.contentBasedDeduplication ? ["content dedup"] : []),
    ...(fifo.deduplicationScope === "messageGroup" ? ["dedup per group"] : []),
  ].join(" · ");
}

/** The queue page's account of a FIFO queue's deduplication. */
export function fifoDeduplication(fifo: FifoSettings): string {
  const by = fifo.contentBasedDeduplication
    ? "the deduplication id a send names, or else its body's SHA-256 (content-based)"
    : "the deduplication id every send must name";
  const scope = fifo.deduplicationScope === "messageGroup" ? "within its message group" : "across the queue";
  return `by ${by}, ${scope}, for five minutes`;
}
