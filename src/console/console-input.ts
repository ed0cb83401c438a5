import { consoleErrors, fieldReasons } from "./console-error.js";

// Readers of the console API's JSON request bodies: each names the field it
// refuses, as the broker's INVALID_ARGUMENT does, so the page can show the
// error beside the input.

/** The body as an object; anything else is refused. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw consoleErrors.invalid("request", "the body must be a JSON object");
  return body as Record<string, unknown>;
}

export function stringField(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== "string") throw consoleErrors.invalid(field, "must be a string");
  return value;
}

/** A string, or undefined when missing or null. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw consoleErrors.invalid(field, "must be a string or null");
  return value;
}

/** A whole number in [min, max], or undefined when missing or null. */
export function optionalInteger(
  body: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw consoleErrors.invalid(field, `must be a whole number from ${min} to ${max}`, fieldReasons.notAWholeNumber);
  }
  return value;
}

/** An array of 1 or more strings, or undefined when missing or null. */
export function optionalStringList(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === "string"))
    throw consoleErrors.invalid(field, "must be a list of one or more strings");
  return value as string[];
}

/** An object of string values, or {} when missing or null. */
export function stringMap(body: Record<string, unknown>, field: string): Record<string, string> {
  const value = body[field];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw consoleErrors.invalid(field, "must be an object of strings");
  // No prototype: an attribute may be called "__proto__", and must be kept as one.
  const map: Record<string, string> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string") throw consoleErrors.invalid(`${field}["${key.slice(0, 40)}"]`, "must be a string");
    map[key] = item;
  }
  return map;
}
