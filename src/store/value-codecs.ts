import { storedQueueRecord, upgradedQueueRecord } from "./queue-record.js";
import { checkpointFlag, leasedFlag, type ScheduleColumns } from "./schedule-columns.js";
import type { DeadLetterOrigin, MessageContent, QueueRecord, ScheduleEntry, TypedAttribute } from "./store.js";

// Layout versions: a reader that meets a version it does not know fails
// loudly instead of misreading data written by a newer holdshelf.
const scheduleVersion = 1;
// Version 2 added the dead-letter origin, version 3 the typed attributes;
// versions 1 and 2 are still read.
const contentVersion = 3;
// The kind byte before a typed attribute's value.
const typedValueKind = { string: 0, binary: 1 } as const;
const scheduleValueBytes = 2 + 4 + 4 + 4 + 8 * 4;
// Bits of the schedule entry's flags byte; unknown bits are zero in older data.
const flags = { leased: 1, hasCheckpoint: 2 } as const;

/** A deadline index entry's value: the lease state (the key holds ready time and id). */
export function encodeScheduleValue(entry: ScheduleEntry): Buffer {
  const value = Buffer.allocUnsafe(scheduleValueBytes);
  value[0] = scheduleVersion;
  value[1] = (entry.leased ? flags.leased : 0) | (entry.hasCheckpoint ? flags.hasCheckpoint : 0);
  value.writeUInt32BE(entry.receiveCount, 2);
  value.writeUInt32BE(entry.epoch, 6);
  value.writeUInt32BE(entry.size, 10);
  value.writeDoubleBE(entry.sendTime, 14);
  value.writeDoubleBE(entry.enqueuedAt, 22);
  value.writeDoubleBE(entry.firstReceiveAt, 30);
  value.writeDoubleBE(entry.leaseStart, 38);
  return value;
}

/** Reads a deadline index entry's value back into columns (its key holds the rest: see readScheduleKeyInto). */
export function decodeScheduleValueInto(value: Buffer, columns: ScheduleColumns, index: number): void {
  if (value[0] !== scheduleVersion || value.length !== scheduleValueBytes) {
    throw new Error(`unknown schedule entry layout (version ${value[0]}, ${value.length} bytes)`);
  }
  columns.flags[index] = (value[1]! & flags.leased ? leasedFlag : 0) | (value[1]! & flags.hasCheckpoint ? checkpointFlag : 0);
  columns.receiveCount[index] = value.readUInt32BE(2);
  columns.epoch[index] = value.readUInt32BE(6);
  columns.size[index] = value.readUInt32BE(10);
  columns.sendTime[index] = value.readDoubleBE(14);
  columns.enqueuedAt[index] = value.readDoubleBE(22);
  columns.firstReceiveAt[index] = value.readDoubleBE(30);
  columns.leaseStart[index] = value.readDoubleBE(38);
}

/**
 * A message's content: version, attribute count, length-prefixed keys and
 * values, the dead-letter origin (a flag, then source queue and reason),
 * typed attribute count and each one's length-prefixed name and data type,
 * value kind (string or binary) and length-prefixed value, then the body.
 */
export function encodeContent(content: MessageContent): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(5);
  header[0] = contentVersion;
  const entries = Object.entries(content.attributes);
  header.writeUInt32BE(entries.length, 1);
  parts.push(header);
  for (const [key, value] of entries) {
    parts.push(lengthPrefixed(Buffer.from(key, "utf8")), lengthPrefixed(Buffer.from(value, "utf8")));
  }
  const { deadLetter } = content;
  parts.push(Buffer.of(deadLetter === undefined ? 0 : 1));
  if (deadLetter !== undefined) {
    parts.push(lengthPrefixed(Buffer.from(deadLetter.sourceQueue, "utf8")), lengthPrefixed(Buffer.from(deadLetter.reason, "utf8")));
  }
  const typed = Object.entries(content.typedAttributes);
  const typedCount = Buffer.allocUnsafe(4);
  typedCount.writeUInt32BE(typed.length, 0);
  parts.push(typedCount);
  for (const [name, { dataType, value }] of typed) {
    parts.push(lengthPrefixed(Buffer.from(name, "utf8")), lengthPrefixed(Buffer.from(dataType, "utf8")));
    if (typeof value === "string") parts.push(Buffer.of(typedValueKind.string), lengthPrefixed(Buffer.from(value, "utf8")));
    else parts.push(Buffer.of(typedValueKind.binary), lengthPrefixed(Buffer.from(value.buffer, value.byteOffset, value.byteLength)));
  }
  parts.push(Buffer.from(content.body.buffer, content.body.byteOffset, content.body.byteLength));
  return Buffer.concat(parts);
}

/** Reads a message's content back. */
export function decodeContent(value: Buffer): MessageContent {
  const version = value[0];
  if (version === undefined || version < 1 || version > contentVersion) {
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
  const typedCount = version >= 3 ? value.readUInt32BE(offset) : 0;
  if (version >= 3) offset += 4;
  for (let i = 0; i < typedCount; i++) {
    const name = readString();
    const dataType = readString();
    const kind = value[offset++];
    if (kind !== typedValueKind.string && kind !== typedValueKind.binary) throw new Error(`unknown typed attribute value kind ${kind}`);
    typed.push([name, { dataType, value: kind === typedValueKind.binary ? readBytes() : readString() }]);
  }
  const typedAttributes: Record<string, TypedAttribute> = Object.fromEntries(typed);
  const body = new Uint8Array(value.buffer, value.byteOffset + offset, value.length - offset);
  return deadLetter === undefined ? { body, attributes, typedAttributes } : { body, attributes, typedAttributes, deadLetter };
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
