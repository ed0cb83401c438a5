import { GroupNames } from "./group-names.js";
import { readIdWords, writeIdWords } from "./message-id-words.js";
import type { ScheduleEntry } from "./schedule-entry.js";

/** Bits of `flags`. */
export const leasedFlag = 1;
export const checkpointFlag = 2;

const initialCapacity = 16;
/**
 * The group number of an entry without a group. Columns hold both kinds
 * only where a move across shards brought a FIFO message into a standard
 * queue (or the reverse) of the same name; each entry then reads as it was.
 */
export const noGroup = -1;
/** A message id is 16 bytes: four big-endian 32-bit words. */
export const idWordsPerEntry = 4;

/**
 * Schedule entries in columns, a typed array per field and an index per
 * entry: what a store loads at start and hands to the broker whole. A
 * million loaded messages cost a few typed arrays instead of a million
 * objects and hex strings, which (with the buffers LevelDB returns) set a
 * restart's time and its memory peak. The broker's MessageTable takes the
 * arrays over as its own, so nothing is copied either.
 */
export class ScheduleColumns {
  /** Entries appended. */
  length = 0;
  protected capacity = 0;
  readyAt = new Float64Array(0);
  sendTime = new Float64Array(0);
  enqueuedAt = new Float64Array(0);
  firstReceiveAt = new Float64Array(0);
  leaseStart = new Float64Array(0);
  receiveCount = new Uint32Array(0);
  epoch = new Uint32Array(0);
  size = new Uint32Array(0);
  flags = new Uint8Array(0);
  idWords = new Uint32Array(0);
  /**
   * FIFO queues' columns: each message's sequence number and group number
   * (see `groups`). Empty, costing nothing, until an entry with a group is
   * written: a standard queue never has them.
   */
  sequence = new Float64Array(0);
  groupNumber = new Int32Array(0);
  groups = new GroupNames();
  private fifo = false;

  /** Columns holding these entries, in this order. */
  static of(entries: readonly ScheduleEntry[]): ScheduleColumns {
    const columns = new ScheduleColumns();
    columns.reserve(entries.length);
    for (const entry of entries) columns.write(columns.append(), entry);
    return columns;
  }

  /** Makes room for `count` entries in all, so that a load that knows its size grows the columns once. */
  reserve(count: number): void {
    if (count <= this.capacity) return;
    let capacity = Math.max(this.capacity, initialCapacity);
    while (capacity < count) capacity *= 2;
    this.grow(capacity);
  }

  /** Adds an entry whose fields the caller then writes; returns its index. */
  append(): number {
    this.reserve(this.length + 1);
    return this.length++;
  }

  /** Writes every field of an entry at an index. Throws for an id that is not 32 lowercase hex digits. */
  write(index: number, entry: ScheduleEntry): void {
    if (!writeIdWords(entry.id, this.idWords, index * idWordsPerEntry)) {
      throw new Error(`message id ${JSON.stringify(entry.id)} is not 32 lowercase hex digits`);
    }
    this.sendTime[index] = entry.sendTime;
    this.enqueuedAt[index] = entry.enqueuedAt;
    this.size[index] = entry.size;
    this.readyAt[index] = entry.readyAt;
    this.firstReceiveAt[index] = entry.firstReceiveAt;
    this.leaseStart[index] = entry.leaseStart;
    this.receiveCount[index] = entry.receiveCount;
    this.epoch[index] = entry.epoch;
    this.flags[index] = (entry.leased ? leasedFlag : 0) | (entry.hasCheckpoint ? checkpointFlag : 0);
    if (entry.group !== undefined) this.writeGroup(index, entry.group, entry.sequence ?? 0);
    else if (this.fifo) this.groupNumber[index] = noGroup;
  }

  /** Whether any entry has a group: the FIFO columns exist. */
  get hasGroups(): boolean {
    return this.fifo;
  }

  /** Sets the group and sequence number of the entry at an index (a FIFO queue's message). */
  writeGroup(index: number, group: string, sequence: number): void {
    if (!this.fifo) {
      this.fifo = true;
      this.sequence = new Float64Array(this.capacity);
      this.groupNumber = new Int32Array(this.capacity).fill(noGroup);
    }
    this.sequence[index] = sequence;
    this.groupNumber[index] = this.groups.intern(group);
  }

  /** The group of the entry at an index; undefined in a standard queue. */
  groupOf(index: number): string | undefined {
    const number = this.fifo ? this.groupNumber[index]! : noGroup;
    return number === noGroup ? undefined : this.groups.nameOf(number);
  }

  /** A copy of the entry at an index. */
  entry(index: number): ScheduleEntry {
    const flags = this.flags[index]!;
    return {
      id: this.idOf(index),
      readyAt: this.readyAt[index]!,
      leased: (flags & leasedFlag) !== 0,
      receiveCount: this.receiveCount[index]!,
      epoch: this.epoch[index]!,
      sendTime: this.sendTime[index]!,
      enqueuedAt: this.enqueuedAt[index]!,
      firstReceiveAt: this.firstReceiveAt[index]!,
      leaseStart: this.leaseStart[index]!,
      size: this.size[index]!,
      hasCheckpoint: (flags & checkpointFlag) !== 0,
      group: this.groupOf(index),
      sequence: this.fifo && this.groupNumber[index] !== noGroup ? this.sequence[index]! : undefined,
    };
  }

  /** Copies of every entry, in order. */
  entries(): ScheduleEntry[] {
    return Array.from({ length: this.length }, (_, index) => this.entry(index));
  }

  /** The 32 hex digits of the id at an index. */
  idOf(index: number): string {
    return readIdWords(this.idWords, index * idWordsPerEntry);
  }

  /** Takes over another instance's arrays and entries (it must not be used after). */
  protected takeOver(other: ScheduleColumns): void {
    this.length = other.length;
    this.capacity = other.capacity;
    this.readyAt = other.readyAt;
    this.sendTime = other.sendTime;
    this.enqueuedAt = other.enqueuedAt;
    this.firstReceiveAt = other.firstReceiveAt;
    this.leaseStart = other.leaseStart;
    this.receiveCount = other.receiveCount;
    this.epoch = other.epoch;
    this.size = other.size;
    this.flags = other.flags;
    this.idWords = other.idWords;
    this.fifo = other.fifo;
    this.sequence = other.sequence;
    this.groupNumber = other.groupNumber;
    this.groups = other.groups;
  }

  /** Replaces every column with a larger one; subclasses grow their own columns too. */
  protected grow(capacity: number): void {
    this.capacity = capacity;
    this.readyAt = grown(this.readyAt, new Float64Array(capacity));
    this.sendTime = grown(this.sendTime, new Float64Array(capacity));
    this.enqueuedAt = grown(this.enqueuedAt, new Float64Array(capacity));
    this.firstReceiveAt = grown(this.firstReceiveAt, new Float64Array(capacity));
    this.leaseStart = grown(this.leaseStart, new Float64Array(capacity));
    this.receiveCount = grown(this.receiveCount, new Uint32Array(capacity));
    this.epoch = grown(this.epoch, new Uint32Array(capacity));
    this.size = grown(this.size, new Uint32Array(capacity));
    this.flags = grown(this.flags, new Uint8Array(capacity));
    this.idWords = grown(this.idWords, new Uint32Array(capacity * idWordsPerEntry));
    if (this.fifo) {
      this.sequence = grown(this.sequence, new Float64Array(capacity));
      this.groupNumber = grown(this.groupNumber, new Int32Array(capacity).fill(noGroup));
    }
  }
}

/** `replacement`, holding `old`'s values at its start. */
export function grown<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(old: T, replacement: T): T {
  replacement.set(old as never);
  return replacement;
}
