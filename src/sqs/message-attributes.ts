import { create } from "@bufbuild/protobuf";
import { TypedAttributeValueSchema, type TypedAttributeValue } from "../../gen/holdshelf/v1/message_pb.js";
import { md5OfMessageAttributes, type SqsAttributeValue } from "./message-digests.js";
import { checkMessageText } from "./message-text.js";
import { sqsErrors } from "./sqs-error.js";
import type { SqsInput } from "./sqs-input.js";

/** SQS's limit of message attributes per message. */
export const maxMessageAttributes = 10;

/** A message's attributes as holdshelf stores them: plain String attributes apart from typed ones. */
export interface HoldshelfAttributes {
  readonly attributes: Record<string, string>;
  readonly typedAttributes: Record<string, TypedAttributeValue>;
  /** What they count toward the message size, as SQS counts: names, types and values. */
  readonly bytes: number;
  /** MD5OfMessageAttributes of what was sent; undefined with none. */
  readonly md5: string | undefined;
}

const namePattern = /^[A-Za-z0-9_.-]{1,256}$/;
const dataTypePattern = /^(String|Number|Binary)(\..+)?$/s;
// Number values as SQS takes them: up to 38 significant digits, an optional sign, point and exponent.
// Each digit belongs to one place in the pattern: an ambiguous split made a
// failed match quadratic, and one long value stalled the broker for minutes.
const numberPattern = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
// Longer than any number SQS takes (38 digits, sign, point, exponent), with room for leading zeros.
const maxNumberLength = 512;

/**
 * Reads an SQS MessageAttributes map, checks it as SQS does, and splits it
 * for holdshelf: an attribute of type exactly "String" is a plain attribute
 * (gRPC consumers read it in `attributes`, as before), any other type (Number,
 * Binary, custom labels such as "Number.int") is a typed attribute, kept with
 * its type. Both come back over SQS exactly as sent.
 */
export function attributesFromSqs(entries: ReadonlyMap<string, SqsInput>, parameter: string): HoldshelfAttributes {
  if (entries.size > maxMessageAttributes) {
    throw sqsErrors.invalidParameterValue(
      `Number of message attributes [${entries.size}] exceeds the allowed maximum [${maxMessageAttributes}].`,
    );
  }
  const attributes: Record<string, string> = Object.create(null) as Record<string, string>;
  const typedAttributes: Record<string, TypedAttributeValue> = Object.create(null) as Record<
    string,
    TypedAttributeValue
  >;
  const digestable: Record<string, SqsAttributeValue> = Object.create(null) as Record<string, SqsAttributeValue>;
  let bytes = 0;
  for (const [name, value] of entries) {
    checkAttributeName(name, parameter);
    const attribute = readAttribute(name, value);
    digestable[name] = attribute;
    bytes += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType);
    if (attribute.BinaryValue !== undefined) {
      bytes += attribute.BinaryValue.byteLength;
      typedAttributes[name] = create(TypedAttributeValueSchema, {
        dataType: attribute.DataType,
        value: { case: "binaryValue", value: attribute.BinaryValue },
      });
    } else {
      const text = attribute.StringValue!;
      bytes += Buffer.byteLength(text);
      if (attribute.DataType === "String") attributes[name] = text;
      else
        typedAttributes[name] = create(TypedAttributeValueSchema, {
          dataType: attribute.DataType,
          value: { case: "stringValue", value: text },
        });
    }
  }
  return { attributes, typedAttributes, bytes, md5: md5OfMessageAttributes(digestable) };
}

/** A delivered message's attributes in SQS's shape (Binary values as bytes), those `wanted` selects. */
export function attributesToSqs(
  attributes: Readonly<Record<string, string>>,
  typedAttributes: Readonly<Record<string, TypedAttributeValue>>,
  wanted: (name: string) => boolean,
): Record<string, SqsAttributeValue> {
  const out: Record<string, SqsAttributeValue> = Object.create(null) as Record<string, SqsAttributeValue>;
  for (const [name, value] of Object.entries(attributes)) {
    if (wanted(name)) out[name] = { DataType: "String", StringValue: value };
  }
  for (const [name, typed] of Object.entries(typedAttributes)) {
    if (!wanted(name)) continue;
    const { value } = typed;
    out[name] =
      value.case === "binaryValue"
        ? { DataType: typed.dataType, BinaryValue: value.value }
        : { DataType: typed.dataType, StringValue: value.case === "stringValue" ? value.value : "" };
  }
  return out;
}

/**
 * Which attribute names a ReceiveMessage asked for, as SQS reads them:
 * "All", ".*" or "*" is every one; "prefix.*" every name starting with
 * "prefix", the dot not included (AWS answers "Hel.*" with "Hello" and
 * "Help.Me"); anything else that name.
 */
export function attributeNameFilter(requested: readonly string[]): (name: string) => boolean {
  if (requested.some((name) => name === "All" || name === ".*" || name === "*")) return () => true;
  const exact = new Set(requested.filter((name) => !name.endsWith(".*")));
  const prefixes = requested.filter((name) => name.endsWith(".*")).map((name) => name.slice(0, -2));
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

function checkAttributeName(name: string, parameter: string): void {
  const lower = name.toLowerCase();
  if (
    !namePattern.test(name) ||
    name.startsWith(".") ||
    name.endsWith(".") ||
    name.includes("..") ||
    lower.startsWith("aws.") ||
    lower.startsWith("amazon.")
  ) {
    throw sqsErrors.invalidParameterValue(
      `Message (user) attribute name '${name}' in ${parameter} is invalid. Names are 1 to 256 characters of A-Z, a-z, 0-9, '_', '-' and '.', without '..', a leading or trailing '.', or a prefix 'AWS.' or 'Amazon.'.`,
    );
  }
}

function readAttribute(name: string, value: SqsInput): SqsAttributeValue {
  const dataType = value["DataType"];
  if (typeof dataType !== "string" || dataType === "") {
    throw sqsErrors.invalidParameterValue(
      `The message attribute '${name}' must contain non-empty message attribute type.`,
    );
  }
  const base = dataTypePattern.exec(dataType)?.[1];
  if (base === undefined || dataType.length > 256) {
    throw sqsErrors.invalidParameterValue(
      `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`,
    );
  }
  if (base === "Binary") {
    const binary = value["BinaryValue"];
    if (typeof binary !== "string" || binary === "" || !isBase64(binary)) {
      throw sqsErrors.invalidParameterValue(
        `The message attribute '${name}' with type 'Binary' must use field 'Binary'.`,
      );
    }
    return { DataType: dataType, BinaryValue: Buffer.from(binary, "base64") };
  }
  const text = value["StringValue"];
  // AWS's words for a value given empty.
  if (text === "") {
    throw sqsErrors.invalidParameterValue(
      `Message (user) attribute '${name}' must contain a non-empty value of type '${base}'.`,
    );
  }
  if (typeof text !== "string") {
    throw sqsErrors.invalidParameterValue(
      `The message attribute '${name}' with type '${base}' must use field 'String'.`,
    );
  }
  checkMessageText(text, `the value of message attribute '${name}'`);
  if (base === "Number" && !isSqsNumber(text)) {
    throw sqsErrors.invalidParameterValue(`Can't cast the value of message (user) attribute '${name}' to a number.`);
  }
  return { DataType: dataType, StringValue: text };
}

function isSqsNumber(text: string): boolean {
  if (text.length > maxNumberLength || !numberPattern.test(text)) return false;
  const digits = text
    .replace(/[eE].*$/, "")
    .replace(/[^0-9]/g, "")
    .replace(/^0+/, "");
  return digits.length <= 38;
}

function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text) && text.length % 4 === 0;
}
