import { invalidArgument } from "../errors/holdshelf-error.js";
import { maxAttributeKeyBytes, maxDataTypeCharacters } from "../protocol/limits.js";
import type { TypedAttribute } from "../store/store.js";
import type { TypedAttributeInput } from "./types.js";

// SQS's three base types, then "." and a label of at least one character
// (any character, the dot and newlines included: /s).
const dataTypePattern = /^(String|Number|Binary)(\..+)?$/s;

/**
 * Checks a message's typed attributes and returns them as stored. `field`
 * is the path of the message in the request ("" or "entries[3]."); a
 * violation names the attribute, e.g. `typed_attributes["x"].binary_value`.
 * Throws INVALID_ARGUMENT.
 */
export function checkTypedAttributes(
  typed: Readonly<Record<string, TypedAttributeInput>>,
  attributes: Readonly<Record<string, string>>,
  field: string,
): Record<string, TypedAttribute> {
  const checked: [string, TypedAttribute][] = [];
  for (const [name, { dataType, value }] of Object.entries(typed)) {
    const nameBytes = Buffer.byteLength(name, "utf8");
    if (nameBytes === 0 || nameBytes > maxAttributeKeyBytes) {
      throw invalidArgument(`${field}typed_attributes`, `names must be 1 to ${maxAttributeKeyBytes} bytes`);
    }
    const path = `${field}typed_attributes[${JSON.stringify(name)}]`;
    // hasOwn, not `in`: an attribute named "constructor" is no clash with Object.prototype's.
    if (Object.hasOwn(attributes, name)) {
      throw invalidArgument(
        path,
        "the name is also in attributes; a name may be in attributes or typed_attributes, not both",
      );
    }
    const base = dataTypePattern.exec(dataType)?.[1];
    if (base === undefined || [...dataType].length > maxDataTypeCharacters) {
      throw invalidArgument(
        `${path}.data_type`,
        `must be String, Number or Binary, optionally followed by "." and a label; at most ${maxDataTypeCharacters} characters`,
      );
    }
    if (base === "Binary") {
      if (!(value instanceof Uint8Array))
        throw invalidArgument(`${path}.binary_value`, `is required for data type ${dataType}`);
    } else if (typeof value !== "string") {
      throw invalidArgument(`${path}.string_value`, `is required for data type ${dataType}`);
    }
    checked.push([name, { dataType, value }]);
  }
  // fromEntries defines own properties: an attribute named "__proto__" stays an attribute.
  return Object.fromEntries(checked);
}

/** The bytes typed attributes count toward max_message_bytes: each name, data type and value (UTF-8 text or bytes). */
export function typedAttributesSize(typed: Readonly<Record<string, TypedAttributeInput>>): number {
  let size = 0;
  for (const [name, { dataType, value }] of Object.entries(typed)) {
    size += Buffer.byteLength(name, "utf8") + Buffer.byteLength(dataType, "utf8");
    if (typeof value === "string") size += Buffer.byteLength(value, "utf8");
    else if (value !== undefined) size += value.byteLength;
  }
  return size;
}
