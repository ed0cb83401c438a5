// Sends a test message to a queue: a body, attributes, an optional delay.
import { numberOrText } from "./number-field.js";
import { useState } from "preact/hooks";
import { sendMessage } from "./api.js";
import { formErrorOf, type FormError } from "./form-errors.js";
import { KeyValueRows, type KeyValue } from "./key-value-rows.js";
import { ErrorMessage, useNotify } from "./notices.js";

/** The test message form of queue `name`; `onSent` refreshes the counts. */
export function SendMessageForm({ name, onSent }: { name: string; onSent: () => void }) {
  const notify = useNotify();
  const [body, setBody] = useState("");
  const [attributes, setAttributes] = useState<KeyValue[]>([]);
  const [delay, setDelay] = useState("");
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const { messageId } = await sendMessage(name, {
        body,
        attributes: Object.fromEntries(attributes.filter((a) => a.key !== "").map((a) => [a.key, a.value])),
        delaySeconds: delay.trim() === "" ? null : numberOrText(delay),
      });
      setError(null);
      notify(`Sent message ${messageId} to ${name}.`);
      onSent();
    } catch (caught) {
      setError(formErrorOf(caught, (field) => field === "body" || field === "delay" || field === "delaySeconds" || field.startsWith("attributes")));
    } finally {
      setBusy(false);
    }
  };

  const bodyError = error?.fields.get("body");
  const delayError = error?.fields.get("delay") ?? error?.fields.get("delaySeconds");
  const attributeErrors = [...(error?.fields ?? [])].filter(([field]) => field.startsWith("attributes")).map(([f, d]) => `${f}: ${d}`);
  return (
    <form class="send-message" onSubmit={submit} aria-labelledby="send-heading" noValidate>
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
      <div class={delayError === undefined ? "field" : "field invalid"}>
        <label for="send-delay">Delay in seconds (optional)</label>
        <input
          id="send-delay"
          type="text"
          inputMode="numeric"
          spellcheck={false}
          value={delay}
          onInput={(event) => setDelay(event.currentTarget.value)}
          aria-describedby={`send-delay-help${delayError === undefined ? "" : " send-delay-error"}`}
          aria-invalid={delayError === undefined ? undefined : "true"}
        />
        <p class="help" id="send-delay-help">
          Empty: the queue's delivery delay.
        </p>
        {delayError !== undefined && (
          <p class="field-error" id="send-delay-error">
            {delayError}
          </p>
        )}
      </div>
      <ErrorMessage error={error?.message ?? null} />
      <button type="submit" class="primary" disabled={busy}>
        Send message
      </button>
    </form>
  );
}
