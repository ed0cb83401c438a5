// The queue page's configuration form. Saving sends only the settings the
// operator changed, as an update mask: a setting another operator changed
// meanwhile (the CLI, another console) stays as they left it.
import { useEffect, useRef, useState } from "preact/hooks";
import { updateQueue } from "./api.js";
import type { QueueView } from "./api-types.js";
import { changedFields, checkDraft, configOf, draftOf, isConfigPath } from "./config-fields.js";
import { focusFirstInvalid } from "./focus-first-invalid.js";
import { formErrorOf, localFormError, type FormError } from "./form-errors.js";
import { formatTime } from "./format.js";
import { ErrorMessage, useNotify } from "./notices.js";
import { DeniedReason } from "./permitted-action.js";
import { QueueConfigFields } from "./queue-config-fields.js";

/**
 * Edits `queue`'s configuration; `onSaved` hears of the queue as the broker
 * stored it. When `denied` says why the token may not change it, the form
 * shows the settings with Save disabled and the reason beside it.
 */
export function QueueSettingsForm({
  queue,
  onSaved,
  denied,
}: {
  queue: QueueView;
  onSaved: (queue: QueueView) => void;
  denied: string | null;
}) {
  const notify = useNotify();
  const form = useRef<HTMLFormElement>(null);
  // What the draft was made from: a save sends the settings that differ from it.
  const [base, setBase] = useState(() => draftOf(queue.config));
  const [draft, setDraft] = useState(base);
  const showQueue = (config: QueueView["config"]) => {
    const shown = draftOf(config);
    setBase(shown);
    setDraft(shown);
  };
  const [dirty, setDirty] = useState(false);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  // The page refreshes every few seconds; a change made elsewhere shows unless the user is mid-edit.
  useEffect(() => {
    if (!dirty) showQueue(queue.config);
  }, [queue.updateTime]);

  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = changedFields(base, draft);
    if (fields.length === 0) {
      reset();
      notify(`Nothing to save: no setting of ${queue.name} changed.`);
      return;
    }
    const local = checkDraft(draft);
    if (local.size > 0) {
      setError(localFormError(local, isConfigPath));
      focusFirstInvalid(form.current);
      return;
    }
    setBusy(true);
    try {
      const saved = (await updateQueue(queue.name, configOf(draft), fields)).queue;
      setError(null);
      setDirty(false);
      showQueue(saved.config);
      notify(`Saved the configuration of ${queue.name}.`);
      onSaved(saved);
    } catch (caught) {
      setError(formErrorOf(caught, isConfigPath));
      focusFirstInvalid(form.current);
    } finally {
      setBusy(false);
    }
  };

  const reset = () => {
    showQueue(queue.config);
    setDirty(false);
    setError(null);
  };

  return (
    <form ref={form} class="settings" onSubmit={submit} aria-labelledby="settings-heading" noValidate>
      <h2 id="settings-heading">Configuration</h2>
      <p class="muted">
        {queue.updateTime !== null && `Last changed ${formatTime(queue.updateTime)}. `}Saving changes only the settings
        you edited; the others keep the values they have then.
      </p>
      <QueueConfigFields
        idPrefix="settings"
        draft={draft}
        onChange={(next) => {
          setDraft(next);
          setDirty(true);
        }}
        errors={error?.fields ?? new Map()}
        emptyMeans="An empty field takes the broker's default."
        typeFixed
      />
      <ErrorMessage error={error?.message ?? null} />
      <div class="buttons">
        <button
          type="submit"
          class="primary"
          disabled={busy || denied !== null}
          title={denied ?? undefined}
          aria-describedby={denied === null ? undefined : "settings-denied"}
        >
          Save configuration
        </button>
        <button type="button" onClick={reset} disabled={busy || !dirty}>
          Discard changes
        </button>
        {denied !== null && <DeniedReason id="settings-denied">{denied}</DeniedReason>}
      </div>
    </form>
  );
}
