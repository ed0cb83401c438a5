// Rows of key and value inputs that can be added and removed: a queue's tags,
// a test message's attributes.
import { useLayoutEffect, useRef } from "preact/hooks";

/** One row's key and value, as typed. */
export interface KeyValue {
  key: string;
  value: string;
}

interface KeyValueRowsProps {
  /** Unique in the page: the ids of the inputs start with it. */
  readonly idPrefix: string;
  readonly legend: string;
  /** What one row is called, singular: "tag", "attribute". */
  readonly noun: string;
  readonly keyLabel: string;
  readonly valueLabel: string;
  readonly rows: readonly KeyValue[];
  readonly onChange: (rows: KeyValue[]) => void;
  readonly error?: string | undefined;
}

/**
 * A fieldset of key and value rows. Each input is labelled with its row's
 * number ("Tag key 2"), so a screen reader tells the rows apart.
 */
export function KeyValueRows(props: KeyValueRowsProps) {
  const { idPrefix, legend, noun, keyLabel, valueLabel, rows, onChange, error } = props;
  const container = useRef<HTMLFieldSetElement>(null);
  const added = useRef(false);
  useLayoutEffect(() => {
    // A new row's key takes focus, so a keyboard user types on at once.
    if (!added.current) return;
    added.current = false;
    container.current?.querySelector<HTMLInputElement>(`#${idPrefix}-key-${rows.length - 1}`)?.focus();
  }, [rows.length, idPrefix]);

  const set = (index: number, change: Partial<KeyValue>) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  const errorId = `${idPrefix}-error`;
  return (
    <fieldset ref={container} class="key-values" aria-describedby={error === undefined ? undefined : errorId}>
      <legend>{legend}</legend>
      {rows.length === 0 && <p class="muted">No {noun}s.</p>}
      {rows.map((row, i) => (
        <div class="key-value-row" key={i}>
          <label for={`${idPrefix}-key-${i}`}>
            {keyLabel} {i + 1}
          </label>
          <input
            id={`${idPrefix}-key-${i}`}
            value={row.key}
            onInput={(event) => set(i, { key: event.currentTarget.value })}
          />
          <label for={`${idPrefix}-value-${i}`}>
            {valueLabel} {i + 1}
          </label>
          <input
            id={`${idPrefix}-value-${i}`}
            value={row.value}
            onInput={(event) => set(i, { value: event.currentTarget.value })}
          />
          <button type="button" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove {noun} {i + 1}
          </button>
        </div>
      ))}
      {error !== undefined && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
      <button
        type="button"
        onClick={() => {
          added.current = true;
          onChange([...rows, { key: "", value: "" }]);
        }}
      >
        Add {noun}
      </button>
    </fieldset>
  );
}
