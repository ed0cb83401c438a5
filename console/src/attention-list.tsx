// The queues the Overview asks an operator to look at, each with why, in words.
import type { Overview } from "./overview-types.js";
import { queueHref } from "./route.js";

const reasonText: Record<string, string> = {
  "dead-lettering": "dead-lettering",
  "oldest-age-growing": "oldest message aging: nobody takes the front of the queue",
  "at-max-in-flight": "at its max in flight: receives get nothing until deletes free room",
};

/** A list of queues and their reasons, linked to each queue's page. */
export function AttentionList({ attention }: { attention: Overview["attention"] }) {
  if (attention.length === 0) return <p data-testid="attention-none">No queue needs attention.</p>;
  return (
    <ul class="attention-list">
      {attention.map(({ queue, reasons }) => (
        <li key={queue} data-testid={`attention-${queue}`}>
          <a href={queueHref(queue)}>{queue}</a>:{" "}
          {reasons.map((reason) => (
            <span key={reason} class={reason === "dead-lettering" ? "mark mark-danger" : "mark mark-warning"}>
              {reasonText[reason] ?? reason}
            </span>
          ))}
        </li>
      ))}
    </ul>
  );
}
