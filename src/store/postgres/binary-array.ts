/**
 * Arrays as statement parameters in PostgreSQL's binary array format (what
 * array_send writes and array_recv reads). node-postgres sends a Buffer
 * parameter in binary and everything else as text, and its text arrays cost
 * both sides dearly: the bench found a quarter of PostgreSQL's CPU in
 * array_in and hex decoding, and a third of the broker's in building the
 * text (docs/performance.md, "Cluster mode on PostgreSQL"). A statement
 * takes these with a cast to the array type (`$1::uuid[]`), which tells
 * PostgreSQL how to read the bytes.
 */

/** The element types the store sends, with their type OIDs (pg_type.oid). */
const elementTypes = {
  int4: 23,
  int8: 20,
  float8: 701,
  uuid: 2950,
  text: 25,
  bytea: 17,
} as const;

/** An element type of a binary array parameter. */
export type ElementType = keyof typeof elementTypes;

// ndim, has-nulls flag, element type; then one dimension's length and lower bound.
const headerBytes = 4 * 3 + 4 * 2;
const fixedWidth: Partial<Record<ElementType, number>> = { int4: 4, int8: 8, float8: 8, uuid: 16 };

/**
 * Encodes `values` as a one-dimensional array of `type`, with no nulls.
 * Numbers for int4, int8 and float8 (int8 values must be safe integers),
 * 32-hex-digit strings for uuid, strings for text, bytes for bytea.
 */
export function binaryArray(type: ElementType, values: readonly unknown[]): Buffer {
  const width = fixedWidth[type];
  const texts = type === "text" ? values.map((value) => Buffer.from(value as string, "utf8")) : undefined;
  const elements = texts ?? (type === "bytea" ? (values as readonly Uint8Array[]) : undefined);
  let size = headerBytes + 4 * values.length;
  if (width !== undefined) size += width * values.length;
  else for (const element of elements!) size += element.byteLength;
  const out = Buffer.allocUnsafe(size);
  out.writeInt32BE(values.length === 0 ? 0 : 1, 0);
  out.writeInt32BE(0, 4);
  out.writeUInt32BE(elementTypes[type], 8);
  out.writeInt32BE(values.length, 12);
  out.writeInt32BE(1, 16);
  // An empty array has no dimensions: its header ends after the element type.
  if (values.length === 0) return out.subarray(0, 12);
  let at = headerBytes;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (width !== undefined) {
      at = out.writeInt32BE(width, at);
      at = writeFixed(out, at, type, value);
    } else {
      const bytes = elements![index]!;
      at = out.writeInt32BE(bytes.byteLength, at);
      out.set(bytes, at);
      at += bytes.byteLength;
    }
  }
  return out;
}

function writeFixed(out: Buffer, at: number, type: ElementType, value: unknown): number {
  switch (type) {
    case "int4":
      return out.writeInt32BE(value as number, at);
    case "int8": {
      const number = value as number;
      if (!Number.isSafeInteger(number)) throw new RangeError(`int8 element ${number} is not a safe integer`);
      // High and low words: no BigInt for ids that fit in 53 bits.
      out.writeInt32BE(Math.floor(number / 2 ** 32), at);
      return out.writeUInt32BE(number >>> 0, at + 4);
    }
    case "float8":
      return out.writeDoubleBE(value as number, at);
    case "uuid": {
      const written = out.write(value as string, at, 16, "hex");
      if (written !== 16) throw new RangeError(`uuid element ${JSON.stringify(value)} is not 32 hex digits`);
      return at + 16;
    }
    default:
      throw new Error(`${type} has no fixed width`);
  }
}
