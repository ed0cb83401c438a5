// A queue's type and FIFO settings, in the create form and the queue page's
// settings form: FIFO is chosen at creation and only shown afterwards;
// content-based deduplication and the deduplication scope stay editable.
import type { ConfigDraft } from "./config-fields.js";
import { fifoPaths } from "./config-fields.js";
import { scopeChoices } from "./fifo-text.js";

interface FifoFieldsProps {
  readonly idPrefix: string;
  readonly draft: ConfigDraft;
  readonly onChange: (draft: ConfigDraft) => void;
  readonly errors: ReadonlyMap<string, string>;
  /** The queue exists: its type is shown, not offered. */
  readonly typeFixed: boolean;
}

/** The "Queue type" fieldset. */
export function FifoFields({ idPrefix, draft, onChange, errors, typeFixed }: FifoFieldsProps) {
  const fifoError = errors.get(fifoPaths.fifo);
  const contentError = errors.get(fifoPaths.contentBasedDeduplication);
  const scopeError = errors.get(fifoPaths.deduplicationScope);
  const id = `${idPrefix}-fifo`;
  return (
    <fieldset class="fifo-fields">
      <legend>Queue type</legend>
      {typeFixed ? (
        <p data-testid={`${id}-type`}>
          {draft.fifo ? "FIFO" : "Standard"}
          <span class="muted"> (set when the queue was created; it cannot change)</span>
        </p>
      ) : (
        <div class={fifoError === undefined ? "field" : "field invalid"}>
          <label class="choice" for={id}>
            <input
              id={id}
              type="checkbox"
              checked={draft.fifo}
              onChange={(event) => onChange({ ...draft, fifo: event.currentTarget.checked })}
              aria-describedby={`${id}-help${fifoError === undefined ? "" : ` ${id}-error`}`}
              aria-invalid={fifoError === undefined ? undefined : "true"}
            />
            FIFO queue
          </label>
          <p class="help" id={`${id}-help`}>
            Every send names a message group, and each group's messages are delivered in send order, one at a time.
            Chosen now: it cannot change later. A name ending in “.fifo” needs it.
          </p>
          {fifoError !== undefined && (
            <p class="field-error" id={`${id}-error`}>
              {fifoError}
            </p>
          )}
        </div>
      )}
      {typeFixed && fifoError !== undefined && <p class="field-error">{fifoError}</p>}
      {draft.fifo && (
        <>
          <div class={contentError === undefined ? "field" : "field invalid"}>
            <label class="choice" for={`${id}-content`}>
              <input
                id={`${id}-content`}
                type="checkbox"
                checked={draft.contentBasedDeduplication}
                onChange={(event) => onChange({ ...draft, contentBasedDeduplication: event.currentTarget.checked })}
                aria-describedby={`${id}-content-help${contentError === undefined ? "" : ` ${id}-content-error`}`}
                aria-invalid={contentError === undefined ? undefined : "true"}
              />
              Content-based deduplication
            </label>
            <p class="help" id={`${id}-content-help`}>
              A send without a deduplication id is deduplicated by its body's SHA-256. Off: every send must name a
              deduplication id.
            </p>
            {contentError !== undefined && (
              <p class="field-error" id={`${id}-content-error`}>
                {contentError}
              </p>
            )}
          </div>
          <fieldset
            class={scopeError === undefined ? "scope" : "scope invalid"}
            aria-describedby={`${id}-scope-help${scopeError === undefined ? "" : ` ${id}-scope-error`}`}
          >
            <legend>Deduplication scope</legend>
            <p class="help" id={`${id}-scope-help`}>
              A send repeating a deduplication id within five minutes stores nothing and returns the first send's
              message id.
            </p>
            {scopeChoices.map((choice) => (
              <div class="choice-with-help" key={choice.value}>
                <label class="choice">
                  <input
                    type="radio"
                    name={`${id}-scope`}
                    value={choice.value}
                    checked={draft.deduplicationScope === choice.value}
                    onChange={() => onChange({ ...draft, deduplicationScope: choice.value })}
                    aria-describedby={`${id}-scope-${choice.value}-help`}
                  />
                  {choice.label}
                </label>
                <span class="help" id={`${id}-scope-${choice.value}-help`}>
                  {choice.help}
                </span>
              </div>
            ))}
            {scopeError !== undefined && (
              <p class="field-error" id={`${id}-scope-error`}>
                {scopeError}
              </p>
            )}
          </fieldset>
        </>
      )}
    </fieldset>
  );
}
