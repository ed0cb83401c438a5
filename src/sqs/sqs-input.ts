import { sqsErrors } from "./sqs-error.js";

/**
 * Readers of an action's input, in the JSON protocol's shape (the query
 * protocol is decoded into it). The input is the caller's: anything may be
 * missing or of the wrong type, and each reader refuses that with the error
 * SQS gives, naming the parameter.
 */
export type SqsInput = Readonly<Record<string, unknown>>;

/** A parameter the action cannot do without: MissingParameter if absent or empty. */
export function requiredString(input: SqsInput, name: string): string {
  const value = optionalString(input, name);
  if (value === undefined || value === "") throw missing(name);
  return value;
}

/** A string parameter, or undefined. */
export function optionalString(input: SqsInput, name: string): string | undefined {
  const value = own(input, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw wrongType(name, "a string");
  return value;
}

/**
 * An integer parameter within [min, max], or undefined; out of bounds says
 * so as SQS does, with `reason` where AWS words a parameter's bounds its own way.
 */
export function optionalInteger(
  input: SqsInput,
  name: string,
  min: number,
  max: number,
  reason = `Must be between ${min} and ${max}.`,
): number | undefined {
  const value = own(input, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)) throw wrongType(name, "an integer");
  if (value < min || value > max) {
    throw sqsErrors.invalidParameterValue(`Value ${value} for parameter ${name} is invalid. Reason: ${reason}`);
  }
  return value;
}

/** A list of strings, or an empty list. */
export function stringList(input: SqsInput, name: string): string[] {
  const value = own(input, name);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string"))
    throw wrongType(name, "a list of strings");
  return value as string[];
}

/** A map of strings to strings (Attributes, Tags), or an empty one; its keys are plain keys, "__proto__" included. */
export function stringMap(input: SqsInput, name: string): Map<string, string> {
  const value = own(input, name);
  if (value === undefined || value === null) return new Map();
  if (typeof value !== "object" || Array.isArray(value)) throw wrongType(name, "a map of strings");
  const map = new Map<string, string>();
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string") throw wrongType(`${name}.${key}`, "a string");
    map.set(key, item);
  }
  return map;
}

/** A list of structures (batch entries), each an SqsInput; an empty or missing list is the caller's to judge. */
export function structureList(input: SqsInput, name: string): SqsInput[] {
  const value = own(input, name);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isStructure)) throw wrongType(name, "a list of structures");
  return value as SqsInput[];
}

/** A map of names to structures (MessageAttributes), or an empty one. */
export function structureMap(input: SqsInput, name: string): Map<string, SqsInput> {
  const value = own(input, name);
  if (value === undefined || value === null) return new Map();
  if (!isStructure(value)) throw wrongType(name, "a map");
  const map = new Map<string, SqsInput>();
  for (const [key, item] of Object.entries(value)) {
    if (!isStructure(item)) throw wrongType(`${name}.${key}`, "a structure");
    map.set(key, item);
  }
  return map;
}

/** MissingParameter for `name`, worded as SQS words it. */
export function missing(name: string): Error {
  return sqsErrors.missingParameter(`The request must contain the parameter ${name}.`);
}

function wrongType(name: string, expected: string): Error {
  return sqsErrors.invalidParameterValue(`Value for parameter ${name} is invalid. Reason: Must be ${expected}.`);
}

function isStructure(value: unknown): value is SqsInput {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Only the input's own members: a parameter named "constructor" or "toString" is absent, not a function.
function own(input: SqsInput, name: string): unknown {
  return Object.hasOwn(input, name) ? input[name] : undefined;
}
