// One message's triage actions: delete it, move it (back to its dead-letter
// source or to another queue), or send a copy with its body edited. Each is
// confirmed in a dialog; a button the token may not use is disabled, with
// the reason beside it, and the broker checks every call again.
import { useId, useState } from "preact/hooks";
import type { PeekedMessage } from "./api-types.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { useNotify } from "./notices.js";
import { ActionButton, deniedReason } from "./permitted-action.js";
import { copyMessage, deleteMessage, moveMessage } from "./triage-api.js";
import type { TriageQueue } from "./triage-queue.js";

type Action = "delete" | "move" | "copy";

interface MessageActionsProps {
  readonly message: PeekedMessage;
  readonly queue: TriageQueue;
  /** The page token of the page that read the message ("" for the first). */
  readonly pageToken: string;
  /** Heard after an action; `gone` when the message left this queue. */
  readonly onDone: (gone: boolean) => void;
}

/** The action buttons of one message, and the dialog of the one chosen. */
export function MessageActions({ message, queue, pageToken, onDone }: MessageActionsProps) {
  const notify = useNotify();
  const id = message.messageId;
  const [open, setOpen] = useState<Action | null>(null);
  const source = message.deadLetter?.sourceQueue ?? "";
  // Delete and move need admin on this queue; so does a copy, whose original the broker reads with PeekMessages.
  const denied = deniedReason(queue.permissions, "admin", queue.name);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of actions, not a form's fieldset
    <div class="message-actions" role="group" aria-label={`Actions on message ${id}`}>
      <ActionButton denied={denied} onClick={() => setOpen("delete")}>
        Delete…
      </ActionButton>
      <ActionButton denied={denied} onClick={() => setOpen("move")}>
        Move…
      </ActionButton>
      <ActionButton denied={denied} onClick={() => setOpen("copy")}>
        Send edited copy…
      </ActionButton>
      {open === "delete" && (
        <ConfirmDialog
          title="Delete this message?"
          confirmLabel="Delete message"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await deleteMessage(queue.name, id);
            notify(`Deleted message ${id} from ${queue.name}.`);
            onDone(true);
          }}
        >
          <p>
            Delete message <code>{id}</code> from {queue.name}? A consumer holding it loses it too. This cannot be
            undone.
          </p>
        </ConfirmDialog>
      )}
      {open === "move" && <MoveDialog {...{ message, queue, source, notify, onDone }} onClose={() => setOpen(null)} />}
      {open === "copy" && (
        <CopyDialog {...{ message, queue, source, pageToken, notify, onDone }} onClose={() => setOpen(null)} />
      )}
    </div>
  );
}

interface DialogProps {
  readonly message: PeekedMessage;
  readonly queue: TriageQueue;
  /** The message's dead-letter source, or "". */
  readonly source: string;
  readonly notify: (text: string) => void;
  readonly onDone: (gone: boolean) => void;
  readonly onClose: () => void;
}

function MoveDialog({ message, queue, source, notify, onDone, onClose }: DialogProps) {
  const [destination, setDestination] = useState("");
  const id = message.messageId;
  return (
    <ConfirmDialog
      title="Move this message?"
      confirmLabel="Move message"
      onClose={onClose}
      onConfirm={async () => {
        const moved = await moveMessage(queue.name, id, destination);
        notify(`Moved message ${id} to ${moved.destinationQueue}.`);
        onDone(true);
      }}
    >
      <p>
        Move message <code>{id}</code> out of {queue.name}, as a redrive moves it: its receive count starts again there.
      </p>
      <DestinationSelect
        queue={queue}
        source={source}
        value={destination}
        onChange={setDestination}
        needs="admin"
        label="Move to"
      />
    </ConfirmDialog>
  );
}

function CopyDialog({
  message,
  queue,
  source,
  pageToken,
  notify,
  onDone,
  onClose,
}: DialogProps & { pageToken: string }) {
  const [destination, setDestination] = useState("");
  const [body, setBody] = useState(message.bodyText ?? "");
  const [group, setGroup] = useState(message.messageGroupId ?? "");
  const fieldId = useId();
  const id = message.messageId;
  return (
    <ConfirmDialog
      title="Send an edited copy?"
      confirmLabel="Send copy"
      onClose={onClose}
      onConfirm={async () => {
        const sent = await copyMessage(queue.name, id, {
          body,
          destinationQueue: destination,
          messageGroupId: group.trim(),
          pageToken,
        });
        notify(`Sent copy ${sent.messageId} of message ${id} to ${sent.destinationQueue}.`);
        onDone(false);
      }}
    >
      <p>
        Send a new message with this body and the attributes of <code>{id}</code>. The original stays in {queue.name}.
        {message.bodyText === null && " Its body is not text, so the copy starts empty."}
      </p>
      <DestinationSelect
        queue={queue}
        source={source}
        value={destination}
        onChange={setDestination}
        needs="send"
        label="Send to"
      />
      <div class="field">
        <label for={`${fieldId}-body`}>Body of the copy</label>
        <textarea
          id={`${fieldId}-body`}
          rows={6}
          value={body}
          onInput={(event) => setBody(event.currentTarget.value)}
          spellcheck={false}
        />
      </div>
      {(message.messageGroupId !== null || queue.fifoDestinations) && (
        <div class="field">
          <label for={`${fieldId}-group`}>Message group id (FIFO; empty keeps the original's)</label>
          <input id={`${fieldId}-group`} value={group} onInput={(event) => setGroup(event.currentTarget.value)} />
        </div>
      )}
    </ConfirmDialog>
  );
}

interface DestinationSelectProps {
  readonly queue: TriageQueue;
  readonly source: string;
  readonly value: string;
  readonly onChange: (value: string) => void;
  /** The permission the destination needs: a queue the token lacks it on is offered disabled, saying why. */
  readonly needs: "admin" | "send";
  readonly label: string;
}

/** A select of the queues to move or send to, "back to its source" first for a dead letter. */
function DestinationSelect({ queue, source, value, onChange, needs, label }: DestinationSelectProps) {
  const id = useId();
  const others = queue.destinations.filter((destination) => destination.name !== queue.name);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {source !== "" ? (
          <option value="">Its dead-letter source, {source}</option>
        ) : (
          <option value="" disabled>
            Choose a queue
          </option>
        )}
        {others.map((destination) => (
          <option key={destination.name} value={destination.name} disabled={!destination.permissions[needs]}>
            {destination.name}
            {destination.permissions[needs] ? "" : ` (needs ${needs})`}
          </option>
        ))}
      </select>
    </div>
  );
}
