// Turns the console API's refusals into what a form shows: one message for
// the form, and each field's description beside the field it names.
import { ApiError } from "./api.js";

/** A form's failure: its summary, and descriptions by proto field path ("config.visibility_timeout"). */
export interface FormError {
  readonly message: string;
  readonly fields: ReadonlyMap<string, string>;
}

/** The text to show for any failure. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A failure as a form shows it. `shown` says which field paths the form has
 * a place for; the descriptions of the others go into the summary, so none is lost.
 */
export function formErrorOf(error: unknown, shown: (field: string) => boolean): FormError {
  if (!(error instanceof ApiError) || error.fields.length === 0)
    return { message: messageOf(error), fields: new Map() };
  const fields = new Map<string, string>();
  const elsewhere: string[] = [];
  for (const { field, description } of error.fields) {
    if (shown(field)) fields.set(field, fields.has(field) ? `${fields.get(field)}; ${description}` : description);
    else elsewhere.push(`${field}: ${description}`);
  }
  const count = fields.size === 1 ? "1 field" : `${fields.size} fields`;
  const summary = fields.size === 0 ? error.message : `The broker refused ${count}; see the message beside each.`;
  return { message: [summary, ...elsewhere].join(" "), fields };
}

/** Focuses the first form control marked invalid, after the render that marked it. */
export function focusFirstInvalid(form: HTMLFormElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus());
}
