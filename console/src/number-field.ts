// What a whole-number field sends. The fields are text inputs, not
// type="number": a browser reports a typo in a number input ("12o00", "1e")
// as an empty value, which the form would send as "use the default" and
// report as saved. As text, a typo reaches the broker as typed, and the
// broker names the field it refuses.

/** A number when the text reads as a whole number, else the text as typed. */
export function numberOrText(text: string): number | string {
  const trimmed = text.trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** Why text is no whole number, in the operator's words; null when it is one. */
export function wholeNumberProblem(text: string): string | null {
  return /^-?\d+$/.test(text.trim()) ? null : "must be a whole number, such as 120000";
}
