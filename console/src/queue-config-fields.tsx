// The inputs of a queue's configuration, shared by the create form and the
// queue page's settings form; each shows its help and the broker's refusal.
import { configGroups, type ConfigDraft, type ConfigField } from "./config-fields.js";
import { FifoFields } from "./fifo-fields.js";
import { durationExamples, parseDuration } from "../../src/time/duration-text.js";
import { formatAge } from "./format.js";
import { KeyValueRows } from "./key-value-rows.js";

interface QueueConfigFieldsProps {
  readonly idPrefix: string;
  readonly draft: ConfigDraft;
  readonly onChange: (draft: ConfigDraft) => void;
  /** The refusals' messages by field path: the page's own and the broker's. */
  readonly errors: ReadonlyMap<string, string>;
  /** What an empty field means here: the broker's default (create) or the same (edit). */
  readonly emptyMeans: string;
  /** The queue exists, so its type (FIFO or standard) is shown rather than chosen. */
  readonly typeFixed: boolean;
}

/** Every configuration group as a fieldset of labelled inputs. */
export function QueueConfigFields({
  idPrefix,
  draft,
  onChange,
  errors,
  emptyMeans,
  typeFixed,
}: QueueConfigFieldsProps) {
  const tagsError = [...errors]
    .filter(([path]) => path.startsWith("config.tags"))
    .map(([path, text]) => `${path}: ${text}`);
  return (
    <div class="config-fields">
      <p class="muted">
        Durations as the CLI takes them: {durationExamples}. {emptyMeans}
      </p>
      <FifoFields idPrefix={idPrefix} draft={draft} onChange={onChange} errors={errors} typeFixed={typeFixed} />
      {configGroups.map((group) => {
        const groupError = group.path === undefined ? undefined : errors.get(group.path);
        const noteId = `${idPrefix}-${group.fields[0]!.key}-group-note`;
        return (
          <fieldset key={group.legend} aria-describedby={group.note === undefined ? undefined : noteId}>
            <legend>{group.legend}</legend>
            {group.note !== undefined && (
              <p class="muted" id={noteId}>
                {group.note}
              </p>
            )}
            {groupError !== undefined && <p class="field-error">{groupError}</p>}
            <div class="field-grid">
              {group.fields.map((field) => (
                <ConfigInput
                  key={field.key}
                  idPrefix={idPrefix}
                  field={field}
                  value={draft[field.key]}
                  error={errors.get(field.path)}
                  onInput={(value) => onChange({ ...draft, [field.key]: value })}
                />
              ))}
            </div>
          </fieldset>
        );
      })}
      <KeyValueRows
        idPrefix={`${idPrefix}-tag`}
        legend="Tags"
        noun="tag"
        keyLabel="Tag key"
        valueLabel="Tag value"
        rows={draft.tags}
        onChange={(tags) => onChange({ ...draft, tags })}
        error={tagsError.length === 0 ? undefined : tagsError.join("; ")}
      />
    </div>
  );
}

function ConfigInput(props: {
  idPrefix: string;
  field: ConfigField;
  value: string;
  error: string | undefined;
  onInput: (value: string) => void;
}) {
  const { idPrefix, field, value, error, onInput } = props;
  const id = `${idPrefix}-${field.key}`;
  // What the typed duration means, read by the parser the console's API and the CLI use: "30" is 30 s.
  const ms = field.kind === "duration" ? parseDuration(value) : undefined;
  const human = value.trim() === "" || ms === undefined || ms === 0 ? null : formatAge(ms);
  return (
    <div class={error === undefined ? "field" : "field invalid"}>
      <label for={id}>{field.label}</label>
      <input
        id={id}
        name={field.key}
        value={value}
        onInput={(event) => onInput(event.currentTarget.value)}
        aria-describedby={`${id}-help${error === undefined ? "" : ` ${id}-error`}`}
        aria-invalid={error === undefined ? undefined : "true"}
        {...(field.kind === "integer"
          ? { type: "text", inputMode: "numeric", spellcheck: false }
          : { type: "text", spellcheck: false })}
        {...(field.defaultValue === undefined ? {} : { placeholder: `default ${field.defaultValue}` })}
      />
      <p class="help" id={`${id}-help`}>
        {human !== null && (
          <span class="human" data-testid={`${id}-meaning`}>
            = {human}.{" "}
          </span>
        )}
        {field.help}
      </p>
      {error !== undefined && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}
