/** Protobuf wire types used by the hand-written encoders. */
export const WireType = { varint: 0, lengthDelimited: 2 } as const;

// google.protobuf.Timestamp's fields.
const timestampField = { seconds: 1, nanos: 2 } as const;

/**
 * Writes protobuf fields into a buffer sized in advance: the hand-written
 * encoders measure a message first (the `*Size` functions below), because
 * a length-delimited field's length comes before its bytes. Numbers are
 * non-negative integers up to 2^53 unless a function says otherwise.
 */
export class WireWriter {
  private readonly buffer: Buffer;
  private offset = 0;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  /** A field's key for fields 1 to 15: one byte (wideTag writes the others). */
  tag(fieldNumber: number, wireType: number): void {
    this.buffer[this.offset++] = (fieldNumber << 3) | wireType;
  }

  /** The tag of a field numbered 16 to 2047: two bytes, a varint as every tag is. */
  wideTag(fieldNumber: number, wireType: number): void {
    this.varint((fieldNumber << 3) | wireType);
  }

  varint(value: number): void {
    const buffer = this.buffer;
    let offset = this.offset;
    while (value >= 0x80) {
      buffer[offset++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    buffer[offset++] = value;
    this.offset = offset;
  }

  /** An int32 field's value: negative numbers take ten bytes, as protobuf sign-extends them to 64 bits. */
  int32(value: number): void {
    if (value >= 0) return this.varint(value);
    const buffer = this.buffer;
    let low = value >>> 0;
    for (let i = 0; i < 4; i++) {
      buffer[this.offset++] = (low & 0x7f) | 0x80;
      low >>>= 7;
    }
    // Bits 28 to 63: the low word's last 4 bits under 32 set bits, in six bytes.
    buffer[this.offset++] = (low & 0x0f) | 0x70 | 0x80;
    for (let i = 0; i < 4; i++) buffer[this.offset++] = 0xff;
    buffer[this.offset++] = 0x01;
  }

  /** A string already measured with Buffer.byteLength. */
  string(value: string, byteLength: number): void {
    this.varint(byteLength);
    this.offset += this.buffer.write(value, this.offset, byteLength, "utf8");
  }

  /**
   * A google.protobuf.Timestamp field of epoch milliseconds (not before
   * 1970), always written, as a set message field is, even when zero.
   */
  timestamp(fieldNumber: number, ms: number): void {
    const { seconds, nanos } = timestampParts(ms);
    if (fieldNumber < 16) this.tag(fieldNumber, WireType.lengthDelimited);
    else this.wideTag(fieldNumber, WireType.lengthDelimited);
    this.varint(timestampSize(ms));
    if (seconds !== 0) {
      this.tag(timestampField.seconds, WireType.varint);
      this.varint(seconds);
    }
    if (nanos !== 0) {
      this.tag(timestampField.nanos, WireType.varint);
      this.varint(nanos);
    }
  }

  bytes(value: Uint8Array): void {
    this.varint(value.byteLength);
    this.buffer.set(value, this.offset);
    this.offset += value.byteLength;
  }

  /** The written bytes; throws if the measured size was wrong, which would be a bug in an encoder. */
  finish(): Buffer {
    if (this.offset !== this.buffer.length) {
      throw new Error(`wire encoder measured ${this.buffer.length} bytes but wrote ${this.offset}`);
    }
    return this.buffer;
  }
}

/** Bytes of a varint holding a non-negative integer up to 2^53. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** Bytes of an int32 field's value. */
export function int32Size(value: number): number {
  return value >= 0 ? varintSize(value) : 10;
}

/** Bytes of a length-delimited value of `length` bytes, with its length prefix (not its tag). */
export function delimitedSize(length: number): number {
  return varintSize(length) + length;
}

/** Bytes of a Timestamp message of epoch milliseconds (its content, without tag and length). */
export function timestampSize(ms: number): number {
  const { seconds, nanos } = timestampParts(ms);
  return (seconds !== 0 ? 1 + varintSize(seconds) : 0) + (nanos !== 0 ? 1 + varintSize(nanos) : 0);
}

/** Epoch milliseconds as a Timestamp's seconds and nanos, split as protobuf-es's timestampFromMs does. */
function timestampParts(ms: number): { seconds: number; nanos: number } {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}
