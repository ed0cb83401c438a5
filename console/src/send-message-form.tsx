// Sends a test message to a queue: a body, attributes, and a delay, or on a
// FIFO queue its message group and deduplication id instead of the delay.
import { useRef, useState } from "preact/hooks";
import { parseDuration } from "../../src/time/duration-text.js";
import { sendMessage } from "./api.js";
import type { FifoSettings, SentMessage } from "./api-types.js";
import { focusFirstInvalid } from "./focus-first-invalid.js";
import { formErrorOf, localFormError, type FormError } from "./form-errors.js";
import { KeyValueRows, type KeyValue } from "./key-value-rows.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { DeniedReason } from "./permitted-action.js";

// The fields the form shows a refusal beside: the console's names for them, and the broker's.
const shownFields = new Set([
  "body",
  "delay",
  "delaySeconds",
  "messageGroupId",
  "message_group_id",
  "deduplicationId",
  "deduplication_id",
]);

/**
 * The test message form of queue `name` (FIFO when `fifo` is set); `onSent`
 * refreshes the counts. When `denied` says why the token may not send, the
 * Send button is disabled with the reason beside it.
 */
export function SendMessageForm({
  name,
  fifo,
  onSent,
  denied,
}: {
  name: string;
  fifo: FifoSettings | null;
  onSent: () => void;
  denied: string | null;
}) {
  const notify = useNotify();
  const form = useRef<HTMLFormElement>(null);
  const [body, setBody] = useState("");
  const [attributes, setAttributes] = useState<KeyValue[]>([]);
  const [delay, setDelay] = useState("");
  const [groupId, setGroupId] = useState("");
  const [deduplicationId, setDeduplicationId] = useState("");
  const [sent, setSent] = useState<SentMessage | null>(null);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    // The delay is read as the CLI reads a duration ("30" is 30 s, "5m"); a send takes whole seconds.
    const delayMs = delay.trim() === "" ? 0 : parseDuration(delay);
    if (fifo === null && (delayMs === undefined || delayMs % 1000 !== 0)) {
      const problem = "must be a duration in whole seconds, such as 30 (seconds), 90s or 5m";
      setError(localFormError(new Map([["delaySeconds", problem]]), (field) => shownFields.has(field)));
      focusFirstInvalid(form.current);
      return;
    }
    setBusy(true);
    try {
      const answer = await sendMessage(name, {
        body,
        attributes: Object.fromEntries(attributes.filter((a) => a.key !== "").map((a) => [a.key, a.value])),
        // A FIFO queue takes no per-message delay, and a standard queue no group or deduplication id: each sends only its own.
        delaySeconds: fifo !== null || delay.trim() === "" ? null : (delayMs ?? 0) / 1000,
        messageGroupId: fifo === null ? null : groupId,
        deduplicationId: fifo === null || deduplicationId === "" ? null : deduplicationId,
      });
      setError(null);
      // The same id again: the broker found this send a repeat within five minutes and stored nothing.
      const repeated = fifo !== null && sent?.messageId === answer.messageId;
      setSent(answer);
      notify(
        answer.sequenceNumber === null
          ? `Sent message ${answer.messageId} to ${name}.`
          : repeated
            ? `Deduplicated: ${name} already holds this send as message ${answer.messageId} (sequence number ${answer.sequenceNumber}); nothing new was stored.`
            : `Sent message ${answer.messageId} to ${name}, sequence number ${answer.sequenceNumber}.`,
      );
      onSent();
    } catch (caught) {
      setError(formErrorOf(caught, (field) => shownFields.has(field) || field.startsWith("attributes")));
      focusFirstInvalid(form.current);
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (...names: string[]) =>
    names.map((field) => error?.fields.get(field)).find((text) => text !== undefined);
  const bodyError = fieldError("body");
  const delayError = fieldError("delay", "delaySeconds");
  const groupError = fieldError("message_group_id", "messageGroupId");
  const deduplicationError = fieldError("deduplication_id", "deduplicationId");
  const attributeErrors = [...(error?.fields ?? [])]
    .filter(([field]) => field.startsWith("attributes"))
    .map(([f, d]) => `${f}: ${d}`);
  return (
    <form ref={form} class="send-message" onSubmit={submit} aria-labelledby="send-heading" noValidate>
      <h2 id="send-heading">Send a test message</h2>
      <div class={bodyError === undefined ? "field" : "field invalid"}>
        <label for="send-body">Message body</label>
        <textarea
          id="send-body"
          rows={4}
          value={body}
          onInput={(event) => setBody(event.currentTarget.value)}
          spellcheck={false}
          aria-invalid={bodyError === undefined ? undefined : "true"}
          aria-describedby={bodyError === undefined ? undefined : "send-body-error"}
        />
        {bodyError !== undefined && (
          <p class="field-error" id="send-body-error">
            {bodyError}
          </p>
        )}
      </div>
      {fifo !== null && (
        <>
          <TextField
            id="send-group"
            label="Message group id"
            value={groupId}
            onInput={setGroupId}
            error={groupError}
            help="Required on a FIFO queue. A group's messages are delivered in send order, one at a time. 1 to 128 printable ASCII characters, no spaces."
          />
          <TextField
            id="send-deduplication"
            label={fifo.contentBasedDeduplication ? "Deduplication id (optional)" : "Deduplication id"}
            value={deduplicationId}
            onInput={setDeduplicationId}
            error={deduplicationError}
            help={`${
              fifo.contentBasedDeduplication
                ? "Empty: the body's SHA-256 stands in. "
                : "Required: this queue has no content-based deduplication. "
            }A send repeating an id${fifo.deduplicationScope === "messageGroup" ? " in the same group" : ""} within five minutes stores nothing and returns the first send's message id.`}
          />
        </>
      )}
      <KeyValueRows
        idPrefix="send-attribute"
        legend="Attributes"
        noun="attribute"
        keyLabel="Attribute name"
        valueLabel="Attribute value"
        rows={attributes}
        onChange={setAttributes}
        error={attributeErrors.length === 0 ? undefined : attributeErrors.join("; ")}
      />
      {fifo === null ? (
        <TextField
          id="send-delay"
          label="Delay (optional)"
          value={delay}
          onInput={setDelay}
          error={delayError}
          help="A duration as the CLI takes it: 30 (seconds), 90s or 5m. Empty: the queue's delivery delay."
        />
      ) : (
        <div class="field">
          <p class="help">A FIFO queue takes no per-message delay: its delivery delay applies to every send.</p>
          {delayError !== undefined && <p class="field-error">{delayError}</p>}
        </div>
      )}
      <ErrorMessage error={error?.message ?? null} />
      <div class="buttons">
        <button
          type="submit"
          class="primary"
          disabled={busy || denied !== null}
          title={denied ?? undefined}
          aria-describedby={denied === null ? undefined : "send-denied"}
        >
          Send message
        </button>
        {denied !== null && <DeniedReason id="send-denied">{denied}</DeniedReason>}
      </div>
      {sent !== null && (
        <p class="sent" data-testid="sent-message">
          Last sent: message <code>{sent.messageId}</code>
          {sent.sequenceNumber !== null && (
            <>
              , sequence number <code data-testid="sent-sequence-number">{sent.sequenceNumber}</code>
            </>
          )}
          .
        </p>
      )}
    </form>
  );
}

interface TextFieldProps {
  readonly id: string;
  readonly label: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly error: string | undefined;
  readonly help: string;
}

/** A labelled one-line input with its help, and the broker's refusal beside it. */
function TextField({ id, label, value, onInput, error, help }: TextFieldProps) {
  return (
    <div class={error === undefined ? "field" : "field invalid"}>
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        autocomplete="off"
        spellcheck={false}
        value={value}
        onInput={(event) => onInput(event.currentTarget.value)}
        aria-describedby={`${id}-help${error === undefined ? "" : ` ${id}-error`}`}
        aria-invalid={error === undefined ? undefined : "true"}
      />
      <p class="help" id={`${id}-help`}>
        {help}
      </p>
      {error !== undefined && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
