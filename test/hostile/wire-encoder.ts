// A hand-written protobuf encoder: unlike toBinary it can write what no valid
// message holds (invalid UTF-8 in a string field, out-of-range varints, wrong
// wire types, truncated fields), which is what the hostile tests must send.

/** One encoded field, or any raw bytes to splice into a message. */
export type Part = Buffer;

/** A base-128 varint; negative numbers are written as 64-bit two's complement, as protobuf does for int32 and int64. */
export function varint(value: bigint | number): Buffer {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Buffer.from(bytes);
}

/** A field key: field number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
export function key(field: number, wireType: number): Buffer {
  return varint((field << 3) | wireType);
}

/** A varint field. */
export function varintField(field: number, value: bigint | number | boolean): Part {
  return concat(key(field, 0), varint(typeof value === "boolean" ? Number(value) : value));
}

/** A length-delimited field: bytes, a string's raw bytes, or an embedded message. */
export function bytesField(field: number, bytes: Uint8Array): Part {
  return concat(key(field, 2), varint(bytes.byteLength), bytes);
}

/** A string field from text (valid UTF-8) or raw bytes (maybe not). */
export function stringField(field: number, text: string | Uint8Array): Part {
  return bytesField(field, typeof text === "string" ? Buffer.from(text, "utf8") : text);
}

/** An embedded message field. */
export function messageField(field: number, ...parts: Uint8Array[]): Part {
  return bytesField(field, concat(...parts));
}

/** A google.protobuf.Duration's fields (seconds int64, nanos int32), written even when out of range. */
export function duration(seconds: bigint | number, nanos: number): Part {
  return concat(varintField(1, seconds), varintField(2, nanos));
}

/** A map<string, string> entry of field `field`. */
export function mapEntry(field: number, mapKey: string | Uint8Array, value: string | Uint8Array): Part {
  return messageField(field, stringField(1, mapKey), stringField(2, value));
}

/** Concatenates parts into one message. */
export function concat(...parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts);
}
