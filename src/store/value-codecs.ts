import { storedQueueRecord, upgradedQueueRecord } from "./queue-record.js";
import { checkpointFlag, leasedFlag, type ScheduleColumns } from "./schedule-columns.js";
import type {
  DeadLetterOrigin,
  MessageContent,
  QueueRecord,
  ScheduleEntry,
  StoredDeduplication,
  TypedAttribute,
} from "./store.js";

// Layout versions: a reader that meets a version it does not know fails
// loudly instead of misreading data written by a newer holdshelf.
// Schedule values: version 1, a standard queue's message; version 2, a FIFO
// queue's, with its sequence number and group after version 1's fields.
// Both are written: a standard queue's values stay byte for byte as before.
const scheduleVersion = { standard: 1, fifo: 2 } as const;
// Version 2 added the dead-letter origin, version 3 the typed attributes,
// version 4 the deduplication id; all are still read. Content without a
// deduplication id (every standard queue's) is still written as version 3,
// byte for byte as before, so that a holdshelf without FIFO queues reads it.
const contentVersion = { beforeDeduplication: 3, latest: 4 } as const;
const deduplicationVersion = 1;
// The kind byte before a typed attribute's value.
const typedValueKind = { string: 0, binary: 1 } as const;
// A message's system attributes (the trace header) ride in the typed
// attributes' list as entries no send can make: an empty name (every
// release refuses one) and the system attribute's name as the data type
// (every release takes only String, Number or Binary there). So the content
// layout, data format 1 and cluster layout 1 stay as they are, and a
// release that does not know them (0.1.0) still reads the message: it shows
// the entry as one more typed attribute, with the body and every other
// field intact, and writes it back unchanged when it moves the message.
const systemEntryName = "";
const traceHeaderType = "AWSTraceHeader";
const scheduleValueBytes = 2 + 4 + 4 + 4 + 8 * 4;
// Version 2 adds the sequence number (f64) and the group's length (u16), then the group's UTF-8 bytes.
const fifoScheduleHeaderBytes = scheduleValueBytes + 8 + 2;
const maxGroupBytes = 0xffff;
// Bits of the schedule entry's flags byte; unknown bits are zero in older data.
const flags = { leased: 1, hasCheckpoint: 2 } as const;
// Version, message id, sequence number, end of the window.
const deduplicationValueBytes = 1 + 16 + 8 + 8;
const messageIdPattern = /^[0-9a-f]{32}$/;

/**
 * A deadline index entry's value: the lease state (the key holds ready time
 * and id), and a FIFO queue's message's sequence number and group. Throws
 * for a group over 65,535 bytes of UTF-8.
 */
export function encodeScheduleValue(entry: ScheduleEntry): Buffer {
  const { group } = entry;
  const groupBytes = group === undefined ? 0 : Buffer.byteLength(group, "utf8");
  if (groupBytes > maxGroupBytes) throw new RangeError(`message group of ${groupBytes} bytes is over ${maxGroupBytes}`);
  const value = Buffer.allocUnsafe(group === undefined ? scheduleValueBytes : fifoScheduleHeaderBytes + groupBytes);
  value[0] = group === undefined ? scheduleVersion.standard : scheduleVersion.fifo;
  value[1] = (entry.leased ? flags.leased : 0) | (entry.hasCheckpoint ? flags.hasCheckpoint : 0);
  value.writeUInt32BE(entry.receiveCount, 2);
  value.writeUInt32BE(entry.epoch, 6);
  value.writeUInt32BE(entry.size, 10);
  value.writeDoubleBE(entry.sendTime, 14);
  value.writeDoubleBE(entry.enqueuedAt, 22);
  value.writeDoubleBE(entry.firstReceiveAt, 30);
  value.writeDoubleBE(entry.leaseStart, 38);
  if (group !== undefined) {
    // As ScheduleColumns.write does, a group without a sequence number counts as sequence 0.
    value.writeDoubleBE(entry.sequence ?? 0, scheduleValueBytes);
    value.writeUInt16BE(groupBytes, scheduleValueBytes + 8);
    value.write(group, fifoScheduleHeaderBytes, groupBytes, "utf8");
  }
  return value;
}

/** Reads a deadline index entry's value back into columns (its key holds the rest: see readScheduleKeyInto). */
export function decodeScheduleValueInto(value: Buffer, columns: ScheduleColumns, index: number): void {
  const version = value[0];
  const fifo = version === scheduleVersion.fifo && value.length >= fifoScheduleHeaderBytes;
  const groupBytes = fifo ? value.readUInt16BE(scheduleValueBytes + 8) : 0;
  const expectedBytes =
    version === scheduleVersion.standard ? scheduleValueBytes : fifo ? fifoScheduleHeaderBytes + groupBytes : -1;
  if (value.length !== expectedBytes) {
    throw new Error(`unknown schedule entry layout (version ${version}, ${value.length} bytes)`);
  }
  columns.flags[index] =
    (value[1]! & flags.leased ? leasedFlag : 0) | (value[1]! & flags.hasCheckpoint ? checkpointFlag : 0);
  columns.receiveCount[index] = value.readUInt32BE(2);
  columns.epoch[index] = value.readUInt32BE(6);
  columns.size[index] = value.readUInt32BE(10);
  columns.sendTime[index] = value.readDoubleBE(14);
  columns.enqueuedAt[index] = value.readDoubleBE(22);
  columns.firstReceiveAt[index] = value.readDoubleBE(30);
  columns.leaseStart[index] = value.readDoubleBE(38);
  if (fifo) {
    const group = value.toString("utf8", fifoScheduleHeaderBytes, fifoScheduleHeaderBytes + groupBytes);
    columns.writeGroup(index, group, value.readDoubleBE(scheduleValueBytes));
  }
}

/**
 * A message's content: version, attribute count, length-prefixed keys and
 * values, the dead-letter origin (a flag, then source queue and reason),
 * typed attribute count and each one's length-prefixed name and data type,
 * value kind (string or binary) and length-prefixed value (and the trace
 * header, as a typed entry: see systemEntryName), in version 4 the
 * deduplication id (a flag, then the id), then the body.
 */
export function encodeContent(content: MessageContent): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(5);
  const { deduplicationId } = content;
  header[0] = deduplicationId === undefined ? contentVersion.beforeDeduplication : contentVersion.latest;
  const entries = Object.entries(content.attributes);
  header.writeUInt32BE(entries.length, 1);
  parts.push(header);
  for (const [key, value] of entries) {
    parts.push(lengthPrefixed(Buffer.from(key, "utf8")), lengthPrefixed(Buffer.from(value, "utf8")));
  }
  const { deadLetter } = content;
  parts.push(Buffer.of(deadLetter === undefined ? 0 : 1));
  if (deadLetter !== undefined) {
    parts.push(
      lengthPrefixed(Buffer.from(deadLetter.sourceQueue, "utf8")),
      lengthPrefixed(Buffer.from(deadLetter.reason, "utf8")),
    );
  }
  const typed = Object.entries(content.typedAttributes);
  if (content.traceHeader !== undefined) {
    typed.push([systemEntryName, { dataType: traceHeaderType, value: content.traceHeader }]);
  }
  const typedCount = Buffer.allocUnsafe(4);
  typedCount.writeUInt32BE(typed.length, 0);
  parts.push(typedCount);
  for (const [name, { dataType, value }] of typed) {
    parts.push(lengthPrefixed(Buffer.from(name, "utf8")), lengthPrefixed(Buffer.from(dataType, "utf8")));
    if (typeof value === "string")
      parts.push(Buffer.of(typedValueKind.string), lengthPrefixed(Buffer.from(value, "utf8")));
    else
      parts.push(
        Buffer.of(typedValueKind.binary),
        lengthPrefixed(Buffer.from(value.buffer, value.byteOffset, value.byteLength)),
      );
  }
  if (deduplicationId !== undefined) parts.push(Buffer.of(1), lengthPrefixed(Buffer.from(deduplicationId, "utf8")));
  parts.push(Buffer.from(content.body.buffer, content.body.byteOffset, content.body.byteLength));
  return Buffer.concat(parts);
}

/** Reads a message's content back. */
export function decodeContent(value: Buffer): MessageContent {
  const version = value[0];
  if (version === undefined || version < 1 || version > contentVersion.latest) {
    throw new Error(`unknown message content layout (version ${version})`);
  }
  const count = value.readUInt32BE(1);
  let offset = 5;
  const pairs: [string, string][] = [];
  const readBytes = (): Uint8Array => {
    const length = value.readUInt32BE(offset);
    const bytes = new Uint8Array(value.buffer, value.byteOffset + offset + 4, length);
    offset += 4 + length;
    return bytes;
  };
  const readString = (): string => {
    const length = value.readUInt32BE(offset);
    const text = value.toString("utf8", offset + 4, offset + 4 + length);
    offset += 4 + length;
    return text;
  };
  for (let i = 0; i < count; i++) pairs.push([readString(), readString()]);
  // fromEntries defines own properties: a key such as "__proto__" stays a key.
  const attributes: Record<string, string> = Object.fromEntries(pairs);
  let deadLetter: DeadLetterOrigin | undefined;
  if (version >= 2 && value[offset++] === 1) deadLetter = { sourceQueue: readString(), reason: readString() };
  const typed: [string, TypedAttribute][] = [];
  let traceHeader: string | undefined;
  const typedCount = version >= 3 ? value.readUInt32BE(offset) : 0;
  if (version >= 3) offset += 4;
  for (let i = 0; i < typedCount; i++) {
    const name = readString();
    const dataType = readString();
    const kind = value[offset++];
    if (kind !== typedValueKind.string && kind !== typedValueKind.binary)
      throw new Error(`unknown typed attribute value kind ${kind}`);
    const typedValue = kind === typedValueKind.binary ? readBytes() : readString();
    if (name === systemEntryName && dataType === traceHeaderType && typeof typedValue === "string") {
      traceHeader = typedValue;
    } else typed.push([name, { dataType, value: typedValue }]);
  }
  const typedAttributes: Record<string, TypedAttribute> = Object.fromEntries(typed);
  let deduplicationId: string | undefined;
  if (version >= 4 && value[offset++] === 1) deduplicationId = readString();
  const body = new Uint8Array(value.buffer, value.byteOffset + offset, value.length - offset);
  // The optional fields only where set: a standard message's content has no key for them.
  const decoded: { -readonly [Field in keyof MessageContent]: MessageContent[Field] } = {
    body,
    attributes,
    typedAttributes,
  };
  if (deadLetter !== undefined) decoded.deadLetter = deadLetter;
  if (deduplicationId !== undefined) decoded.deduplicationId = deduplicationId;
  if (traceHeader !== undefined) decoded.traceHeader = traceHeader;
  return decoded;
}

/** A deduplication record's value: version, message id (16 bytes), sequence number and window end (f64s); the key holds the rest. */
export function encodeDeduplication(record: StoredDeduplication): Buffer {
  if (!messageIdPattern.test(record.messageId)) {
    throw new Error(`message id ${JSON.stringify(record.messageId)} is not 32 lowercase hex digits`);
  }
  const value = Buffer.allocUnsafe(deduplicationValueBytes);
  value[0] = deduplicationVersion;
  value.write(record.messageId, 1, 16, "hex");
  value.writeDoubleBE(record.sequence, 17);
  value.writeDoubleBE(record.expiresAt, 25);
  return value;
}

/** Reads a deduplication record back from its key (the deduplication key's text) and value. */
export function decodeDeduplication(key: string, value: Buffer): StoredDeduplication {
  if (value[0] !== deduplicationVersion || value.length !== deduplicationValueBytes) {
    throw new Error(`unknown deduplication record layout (version ${value[0]}, ${value.length} bytes)`);
  }
  return {
    key,
    messageId: value.toString("hex", 1, 17),
    sequence: value.readDoubleBE(17),
    expiresAt: value.readDoubleBE(25),
  };
}

/** A queue record: JSON, since it is small, rare and worth reading by eye. */
export function encodeQueueRecord(record: QueueRecord): Buffer {
  return Buffer.from(JSON.stringify(storedQueueRecord(record)), "utf8");
}

/** Reads a queue record back, one written before tags and update times too. */
export function decodeQueueRecord(value: Buffer): QueueRecord {
  return upgradedQueueRecord(JSON.parse(value.toString("utf8")) as Parameters<typeof upgradedQueueRecord>[0]);
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}
