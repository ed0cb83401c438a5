// Turns a refusal into what a form shows: one message for the form, and each
// field's message beside the field it names. A refusal names every field at
// once, whether the page found them (checkDraft) or the broker did.
import { ApiError } from "./api.js";

/** A form's failure: its summary, and messages by proto field path ("config.visibility_timeout"). */
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
 * a place for; the messages of the others go into the summary, so none is lost.
 */
export function formErrorOf(error: unknown, shown: (field: string) => boolean): FormError {
  if (!(error instanceof ApiError) || error.fields.length === 0)
    return { message: messageOf(error), fields: new Map() };
  return fieldsError(
    "The broker refused",
    error.fields.map(({ field, message }) => [field, message]),
    shown,
    error.message,
  );
}

/** The page's own refusal of a form's values, before anything is sent: every field it cannot read. */
export function localFormError(fields: ReadonlyMap<string, string>, shown: (field: string) => boolean): FormError {
  return fieldsError("Check", [...fields], shown, "");
}

function fieldsError(
  who: string,
  refused: readonly (readonly [string, string])[],
  shown: (field: string) => boolean,
  otherwise: string,
): FormError {
  const fields = new Map<string, string>();
  const elsewhere: string[] = [];
  for (const [field, message] of refused) {
    if (shown(field)) fields.set(field, fields.has(field) ? `${fields.get(field)}; ${message}` : message);
    else elsewhere.push(`${field}: ${message}`);
  }
  // No field has a place here: the refusal's own message already names each one, so it alone is the summary.
  if (fields.size === 0) return { message: otherwise !== "" ? otherwise : elsewhere.join(" "), fields };
  const count = fields.size === 1 ? "1 field" : `${fields.size} fields`;
  return { message: [`${who} ${count}; see the message beside each.`, ...elsewhere].join(" "), fields };
}
