// One message as a compact row (id, state, age, receive count, and for a
// dead letter its source and reason) that opens to the message in full
// with its actions. A native <details>: keyboard and screen readers know it.
import { useState } from "preact/hooks";
import type { MessageState, PeekedMessage } from "./api-types.js";
import { formatAge } from "./format.js";
import { MessageActions } from "./message-actions.js";
import { MessageCard } from "./message-card.js";
import type { TriageQueue } from "./triage-queue.js";

const stateLabels: Record<MessageState, string> = { visible: "Visible", in_flight: "In flight", delayed: "Delayed" };

interface MessageRowProps {
  readonly message: PeekedMessage;
  /** When the page read the message, for its age. */
  readonly readAt: number;
  /** null until the queue's permissions are read: the actions wait for them. */
  readonly queue: TriageQueue | null;
  readonly pageToken: string;
  readonly onDone: (messageId: string, gone: boolean) => void;
}

/** A message of the browser, closed until opened. */
export function MessageRow({ message, readAt, queue, pageToken, onDone }: MessageRowProps) {
  const [open, setOpen] = useState(false);
  const id = message.messageId;
  const history = message.deadLetter;
  return (
    <li class="message-row">
      <details onToggle={(event) => setOpen(event.currentTarget.open)}>
        <summary data-testid={`row-${id}`}>
          <code class="message-id">{id}</code>
          <span class={`state state-${message.state}`} data-testid={`state-${id}`}>
            {stateLabels[message.state]}
          </span>
          <span>
            <span class="row-label">age </span>
            {formatAge(Math.max(0, readAt - message.sendTime))}
          </span>
          <span>
            <span data-testid={`receive-count-${id}`}>{message.receiveCount}</span>
            <span class="row-label"> {message.receiveCount === 1 ? "receive" : "receives"}</span>
          </span>
          {message.messageGroupId !== null && (
            <span>
              <span class="row-label">group </span>
              <code data-testid={`group-id-${id}`}>{message.messageGroupId}</code>
            </span>
          )}
          {message.sequenceNumber !== null && (
            <span>
              <span class="row-label">seq </span>
              <code data-testid={`sequence-number-${id}`}>{message.sequenceNumber}</code>
            </span>
          )}
          {history !== null && (
            <span data-testid={`dead-letter-${id}`}>
              <span class="row-label">from </span>
              {history.sourceQueue}
              <span class="row-label">, </span>
              {history.reason}
            </span>
          )}
        </summary>
        {open && (
          <div class="message">
            <MessageCard message={message} />
            {queue !== null && (
              <MessageActions
                message={message}
                queue={queue}
                pageToken={pageToken}
                onDone={(gone) => onDone(id, gone)}
              />
            )}
          </div>
        )}
      </details>
    </li>
  );
}
