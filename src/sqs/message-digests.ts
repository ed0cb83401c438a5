import { createHash } from "node:crypto";

/** An SQS message attribute as the JSON protocol carries it: Binary values as bytes here. */
export interface SqsAttributeValue {
  readonly DataType: string;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

/** MD5OfMessageBody / MD5OfBody: the lowercase hex MD5 of the body's UTF-8 bytes. */
export function md5OfBody(body: string): string {
  return createHash("md5").update(body, "utf8").digest("hex");
}

/**
 * MD5OfMessageAttributes, as SQS specifies it and the SDKs check it: over the
 * attributes sorted by name, each as length-prefixed name and data type, a
 * transport byte (1 for String and Number types, 2 for Binary) and the
 * length-prefixed value. Undefined when there are no attributes (the field
 * is then left out).
 */
export function md5OfMessageAttributes(attributes: Readonly<Record<string, SqsAttributeValue>>): string | undefined {
  const names = Object.keys(attributes).sort(compareUtf16);
  if (names.length === 0) return undefined;
  const hash = createHash("md5");
  for (const name of names) {
    const attribute = attributes[name]!;
    hash.update(lengthPrefixed(Buffer.from(name, "utf8")));
    hash.update(lengthPrefixed(Buffer.from(attribute.DataType, "utf8")));
    if (attribute.BinaryValue !== undefined) {
      hash.update(Buffer.of(2));
      hash.update(lengthPrefixed(Buffer.from(attribute.BinaryValue)));
    } else {
      hash.update(Buffer.of(1));
      hash.update(lengthPrefixed(Buffer.from(attribute.StringValue ?? "", "utf8")));
    }
  }
  return hash.digest("hex");
}

// The SDKs sort names with their language's default string order (Java's
// String.compareTo, JavaScript's sort): UTF-16 code units, which is what the
// comparison operators compare.
function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}
