// Where focus goes after a form is refused: to the first field it names.

/** Focuses the first form control marked invalid, after the render that marked it. */
export function focusFirstInvalid(form: HTMLFormElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus());
}
