/**
 * Every key holdshelf writes, in one place. Keys are bytes; numbers in them
 * are fixed-width big-endian, so that byte order is numeric order and a
 * schedule key's order is ready-time order.
 *
 *   meta        0x00 name                               -> value of the setting
 *   queue       0x01 queue name (UTF-8)                 -> QueueRecord (JSON)
 *   content     0x02 dataId:u32 id:16                   -> MessageContent
 *   schedule    0x03 dataId:u32 readyAt:u64 id:16       -> ScheduleEntry state
 *   checkpoint  0x04 dataId:u32 id:16                   -> the consumer's progress bytes
 *   dedup       0x05 dataId:u32 key (UTF-8)             -> StoredDeduplication (version, message id:16,
 *                                                          sequence:f64, expiresAt:f64)
 *
 * The schedule space is the deadline index: one entry per message, keyed by
 * when it becomes visible, written in the same batch as the message. The
 * dedup space holds a FIFO queue's deduplication ids within their window;
 * it is a data space, so a purge (a new data id, the old one dropped)
 * forgets them, as Amazon SQS's purge does.
 */
import { idWordsPerEntry, type ScheduleColumns } from "./schedule-columns.js";

const space = {
  meta: 0x00,
  queue: 0x01,
  content: 0x02,
  schedule: 0x03,
  checkpoint: 0x04,
  deduplication: 0x05,
} as const;

/** Key of a named setting. */
export function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.of(space.meta), Buffer.from(name, "latin1")]);
}

/** Key of a queue record. */
export function queueKey(name: string): Buffer {
  return Buffer.concat([Buffer.of(space.queue), Buffer.from(name, "utf8")]);
}

/** The range holding every queue record. */
export function queueRange(): { gte: Buffer; lt: Buffer } {
  return { gte: Buffer.of(space.queue), lt: Buffer.of(space.queue + 1) };
}

/** Key of a message's content. */
export function contentKey(dataId: number, id: string): Buffer {
  return messageKey(space.content, dataId, id);
}

/** Key of a message's checkpoint. */
export function checkpointKey(dataId: number, id: string): Buffer {
  return messageKey(space.checkpoint, dataId, id);
}

/** Key of a message's deadline index entry. */
export function scheduleKey(dataId: number, readyAt: number, id: string): Buffer {
  const key = Buffer.allocUnsafe(29);
  key[0] = space.schedule;
  key.writeUInt32BE(dataId, 1);
  writeUint64(key, 5, readyAt);
  key.write(id, 13, 16, "hex");
  return key;
}

/** Reads a deadline index key's ready time and message id into columns, with no string or object made per key. */
export function readScheduleKeyInto(key: Buffer, columns: ScheduleColumns, index: number): void {
  columns.readyAt[index] = readUint64(key, 5);
  const at = index * idWordsPerEntry;
  for (let word = 0; word < idWordsPerEntry; word++) columns.idWords[at + word] = key.readUInt32BE(13 + 4 * word);
}

/** The range of a data space's deadline index, in ready-time order. */
export function scheduleRange(dataId: number): { gte: Buffer; lt: Buffer } {
  return dataRange(space.schedule, dataId);
}

/** Key of a FIFO queue's deduplication record. */
export function deduplicationKey(dataId: number, key: string): Buffer {
  return Buffer.concat([dataPrefix(space.deduplication, dataId), Buffer.from(key, "utf8")]);
}

/** The deduplication key's text of a deduplication record's key. */
export function deduplicationKeyText(key: Buffer): string {
  return key.toString("utf8", 5);
}

/** The range of a data space's deduplication records. */
export function deduplicationRange(dataId: number): { gte: Buffer; lt: Buffer } {
  return dataRange(space.deduplication, dataId);
}

/** The spaces that hold a queue's data (messages and deduplication records), keyed by data id. */
export const dataSpaces = [space.content, space.schedule, space.checkpoint, space.deduplication] as const;

/** The ranges of everything a data space holds. */
export function dataRanges(dataId: number): { gte: Buffer; lt: Buffer }[] {
  return dataSpaces.map((spaceByte) => dataRange(spaceByte, dataId));
}

/** The range of one data space (content, schedule, checkpoint or dedup) from a data id on. */
export function dataSpaceFrom(spaceByte: number, dataId: number): { gte: Buffer; lt: Buffer } {
  return { gte: dataPrefix(spaceByte, dataId), lt: Buffer.of(spaceByte + 1) };
}

/** The data id of a key of any data space. */
export function dataIdOfKey(key: Buffer): number {
  return key.readUInt32BE(1);
}

function messageKey(spaceByte: number, dataId: number, id: string): Buffer {
  const key = Buffer.allocUnsafe(21);
  key[0] = spaceByte;
  key.writeUInt32BE(dataId, 1);
  key.write(id, 5, 16, "hex");
  return key;
}

function dataRange(spaceByte: number, dataId: number): { gte: Buffer; lt: Buffer } {
  return { gte: dataPrefix(spaceByte, dataId), lt: dataPrefix(spaceByte, dataId + 1) };
}

function dataPrefix(spaceByte: number, dataId: number): Buffer {
  const prefix = Buffer.allocUnsafe(5);
  prefix[0] = spaceByte;
  prefix.writeUInt32BE(dataId, 1);
  return prefix;
}

function writeUint64(buffer: Buffer, offset: number, value: number): void {
  buffer.writeUInt32BE(Math.floor(value / 0x100000000), offset);
  buffer.writeUInt32BE(value >>> 0, offset + 4);
}

function readUint64(buffer: Buffer, offset: number): number {
  return buffer.readUInt32BE(offset) * 0x100000000 + buffer.readUInt32BE(offset + 4);
}
