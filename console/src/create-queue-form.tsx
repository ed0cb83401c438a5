// The form for a new queue, in the queue list's Create queue dialog: a name,
// and any settings that should differ from the broker's defaults.
import { useRef, useState } from "preact/hooks";
import { createQueue } from "./api.js";
import type { QueueView } from "./api-types.js";
import { checkDraft, configOf, emptyDraft, isConfigPath } from "./config-fields.js";
import { focusFirstInvalid } from "./focus-first-invalid.js";
import { formErrorOf, localFormError, type FormError } from "./form-errors.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { QueueConfigFields } from "./queue-config-fields.js";

/** Creates a queue; `onCreated` hears of it, `onCancel` of the Cancel button. */
export function CreateQueueForm({
  onCreated,
  onCancel,
}: {
  onCreated: (queue: QueueView) => void;
  onCancel: () => void;
}) {
  const notify = useNotify();
  const form = useRef<HTMLFormElement>(null);
  const [name, setName] = useState("");
  const [draft, setDraft] = useState(emptyDraft);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const local = checkDraft(draft);
    if (name.trim() === "") local.set("name", "is required: enter the new queue's name");
    if (local.size > 0) {
      setError(localFormError(local, (path) => path === "name" || isConfigPath(path)));
      focusFirstInvalid(form.current);
      return;
    }
    setBusy(true);
    try {
      const { queue } = await createQueue(name.trim(), configOf(draft));
      setError(null);
      setName("");
      setDraft(emptyDraft());
      notify(`Created queue ${queue.name}.`);
      onCreated(queue);
    } catch (caught) {
      setError(formErrorOf(caught, (path) => path === "name" || isConfigPath(path)));
      focusFirstInvalid(form.current);
    } finally {
      setBusy(false);
    }
  };

  const nameError = error?.fields.get("name");
  return (
    <form ref={form} class="create-queue" onSubmit={submit} aria-labelledby="create-queue-heading" noValidate>
      <h2 id="create-queue-heading">Create a queue</h2>
      <div class={nameError === undefined ? "field" : "field invalid"}>
        <label for="create-name">Queue name</label>
        <input
          id="create-name"
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
          required
          spellcheck={false}
          autocomplete="off"
          aria-describedby={`create-name-help${nameError === undefined ? "" : " create-name-error"}`}
          aria-invalid={nameError === undefined ? undefined : "true"}
        />
        <p class="help" id="create-name-help">
          1 to 80 characters: letters, digits, “_” and “-”, and for a FIFO queue an optional “.fifo” ending (as SQS
          requires). Case-sensitive.
        </p>
        {nameError !== undefined && (
          <p class="field-error" id="create-name-error">
            {nameError}
          </p>
        )}
      </div>
      <QueueConfigFields
        idPrefix="create"
        draft={draft}
        onChange={setDraft}
        errors={error?.fields ?? new Map()}
        emptyMeans="Leave a field empty for the broker's default."
        typeFixed={false}
      />
      <ErrorMessage error={error?.message ?? null} />
      <div class="dialog-buttons">
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={busy}>
          Create queue
        </button>
      </div>
    </form>
  );
}
