import {
  checkpointFlag,
  grown,
  idWordsPerEntry,
  leasedFlag,
  noGroup,
  ScheduleColumns,
} from "../store/schedule-columns.js";
import { writeIdWords } from "../store/message-id-words.js";
import type { ScheduleEntry } from "../store/store.js";

/**
 * A message as the rules work on it: a copy of its schedule entry read out of
 * its queue's MessageTable, and the slot it was read from. Changing the copy
 * changes nothing until it is written back (QueueState.reschedule).
 */
export interface LiveMessage extends ScheduleEntry {
  readonly slot: number;
  /** The slot's generation when read (see `generationOf`): a copy outliving its message never touches the slot's next one. */
  readonly generation: number;
}

/** No slot: the end of a chain, or an empty place. */
export const noSlot = -1;

/** In the visible heap rather than the hidden one (QueueState's placing). */
const visibleHeapFlag = 4;
/** Holds a message (else free). */
const inUseFlag = 8;
/** The flags a copy's write-back leaves alone. */
const placementFlags = visibleHeapFlag | inUseFlag;
/** A table emptied with more room than this gives its columns back (see `release`). */
const keptCapacity = 1024;

/**
 * The messages of one queue in memory: the schedule's columns (a typed array
 * per field, a slot per message) instead of an object per message. Objects
 * with boxed times, hex-string ids and a Map entry each took about 420 bytes
 * of heap a message; these columns take about 100. Ids are kept as four
 * 32-bit words and found through an open-addressing hash table of slots.
 * Freed slots are reused; each has a generation, bumped when it is freed, so
 * a copy read before can tell its message is gone.
 *
 * The table knows nothing of order: QueueState's heaps (in `heapIndex`) and
 * its ArrivalChain (`older`, `newer`) keep theirs in its columns.
 */
export class MessageTable extends ScheduleColumns {
  /** Messages held (slots below `length` are held or on the free chain). */
  count = 0;
  private freeHead = noSlot;
  /** Bumped when the columns are given back, so that generations of the old columns never match new ones. */
  private era = 0;
  generation = new Uint32Array(0);
  /** The slot's place in whichever heap holds it, or -1. */
  heapIndex = new Int32Array(0);
  /** Neighbours in enqueue order (noSlot at the ends); `newer` also chains free slots. */
  older = new Int32Array(0);
  newer = new Int32Array(0);
  /** Slot + 1 of each id by hash, 0 where empty; linear probing. */
  private buckets = new Int32Array(0);

  /**
   * A table over the columns a store loaded (taken over, not copied). A
   * message has one entry unless a failed write (after memory moved on) left
   * an old one behind; only its latest delivery's is kept, since delivering
   * from both would hand the same message out twice.
   */
  static loaded(columns: ScheduleColumns): MessageTable {
    const table = new MessageTable();
    table.takeOver(columns);
    table.growOwn(table.capacity);
    table.heapIndex.fill(-1);
    // Sized, not rehashed: no slot is marked in use yet, and the loop below indexes each.
    table.buckets = new Int32Array(bucketCountFor(table.length));
    for (let slot = 0; slot < table.length; slot++) {
      table.flags[slot]! |= inUseFlag;
      table.count++;
      const existing = table.index(slot);
      if (existing === noSlot) continue;
      const older = table.epoch[existing]! > table.epoch[slot]! ? slot : existing;
      if (older === existing) table.replaceInIndex(existing, slot);
      table.free(older);
    }
    return table;
  }

  /** Makes room for `count` messages in all. */
  override reserve(count: number): void {
    super.reserve(count);
    if (count * 2 > this.buckets.length) this.rehash(count);
  }

  /** Stores a new message (its id must not be held) and returns its slot. */
  insert(entry: ScheduleEntry): number {
    this.reserve(this.count + 1);
    let slot = this.freeHead;
    if (slot !== noSlot) this.freeHead = this.newer[slot]!;
    else slot = this.append();
    this.count++;
    this.write(slot, entry);
    this.flags[slot]! |= inUseFlag;
    this.heapIndex[slot] = -1;
    this.index(slot);
    return slot;
  }

  /**
   * Frees a slot: its id is no longer found and copies read from it are
   * stale. The last message out of a large table takes its columns along: a
   * backlog of ten million, once drained, would otherwise keep a gigabyte.
   */
  release(slot: number): void {
    this.unindex(slot);
    this.free(slot);
    if (this.count === 0 && this.capacity > keptCapacity) this.giveBack();
  }

  /** Writes a copy's changeable fields back into its slot (ready time, lease state, counters). */
  store(slot: number, entry: ScheduleEntry): void {
    this.readyAt[slot] = entry.readyAt;
    this.firstReceiveAt[slot] = entry.firstReceiveAt;
    this.leaseStart[slot] = entry.leaseStart;
    this.receiveCount[slot] = entry.receiveCount;
    this.epoch[slot] = entry.epoch;
    this.flags[slot] =
      (this.flags[slot]! & placementFlags) |
      (entry.leased ? leasedFlag : 0) |
      (entry.hasCheckpoint ? checkpointFlag : 0);
  }

  /** A copy of the message in a slot. */
  read(slot: number): LiveMessage {
    const flags = this.flags[slot]!;
    // One literal with every field, not `entry()` plus two more: the rules
    // read a copy per message taken, and objects of one shape stay fast.
    return {
      id: this.idOf(slot),
      readyAt: this.readyAt[slot]!,
      leased: (flags & leasedFlag) !== 0,
      receiveCount: this.receiveCount[slot]!,
      epoch: this.epoch[slot]!,
      sendTime: this.sendTime[slot]!,
      enqueuedAt: this.enqueuedAt[slot]!,
      firstReceiveAt: this.firstReceiveAt[slot]!,
      leaseStart: this.leaseStart[slot]!,
      size: this.size[slot]!,
      hasCheckpoint: (flags & checkpointFlag) !== 0,
      group: this.groupOf(slot),
      sequence: this.hasGroups && this.groupNumber[slot] !== noGroup ? this.sequence[slot]! : undefined,
      slot,
      generation: this.generationOf(slot),
    };
  }

  /** Whether a copy was read from the message its slot holds now. */
  holds(message: LiveMessage): boolean {
    return message.slot < this.length && this.generationOf(message.slot) === message.generation;
  }

  /** Whether a slot's message is hidden by a lease (rather than by a delay, or visible). */
  isLeased(slot: number): boolean {
    return (this.flags[slot]! & leasedFlag) !== 0;
  }

  /** Marks a slot's lease as ended, as an expiry finds it. */
  clearLeased(slot: number): void {
    this.flags[slot] = this.flags[slot]! & ~leasedFlag;
  }

  /** Whether QueueState placed the slot in its visible heap (else the hidden one). */
  inVisibleHeap(slot: number): boolean {
    return (this.flags[slot]! & visibleHeapFlag) !== 0;
  }

  /** Records which heap QueueState placed the slot in. */
  setInVisibleHeap(slot: number, visible: boolean): void {
    this.flags[slot] = visible ? this.flags[slot]! | visibleHeapFlag : this.flags[slot]! & ~visibleHeapFlag;
  }

  /** Whether a slot holds a message. */
  inUse(slot: number): boolean {
    return (this.flags[slot]! & inUseFlag) !== 0;
  }

  /** Every slot that holds a message, in slot order: for a sort by some column. */
  slotsInUse(): Int32Array {
    const slots = new Int32Array(this.count);
    let found = 0;
    for (let slot = 0; slot < this.length; slot++) if (this.inUse(slot)) slots[found++] = slot;
    return slots;
  }

  /** The slot holding a message id, or noSlot. */
  find(id: string): number {
    if (this.count === 0 || !writeIdWords(id, wanted, 0)) return noSlot;
    const w0 = wanted[0]!;
    const w1 = wanted[1]!;
    const w2 = wanted[2]!;
    const w3 = wanted[3]!;
    const words = this.idWords;
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    for (let bucket = hashWords(w2, w3) & mask; ; bucket = (bucket + 1) & mask) {
      const slot = buckets[bucket]! - 1;
      if (slot === noSlot) return noSlot;
      const at = slot * idWordsPerEntry;
      if (words[at + 3] === w3 && words[at + 2] === w2 && words[at + 1] === w1 && words[at] === w0) return slot;
    }
  }

  /** Whether slot a's id sorts before slot b's (ids are 16 big-endian bytes, so word by word). */
  idBefore(a: number, b: number): boolean {
    return this.compareIds(a, b) < 0;
  }

  /** Id order of two slots: negative, zero or positive. */
  compareIds(a: number, b: number): number {
    const words = this.idWords;
    const atA = a * idWordsPerEntry;
    const atB = b * idWordsPerEntry;
    // Unrolled: the heaps compare ids on every ready-time tie, and a batch's messages all tie.
    return (
      words[atA]! - words[atB]! ||
      words[atA + 1]! - words[atB + 1]! ||
      words[atA + 2]! - words[atB + 2]! ||
      words[atA + 3]! - words[atB + 3]!
    );
  }

  /** Forgets every message (purge and delete). */
  clear(): void {
    this.count = 0;
    this.giveBack();
  }

  protected override grow(capacity: number): void {
    super.grow(capacity);
    this.growOwn(capacity);
  }

  private growOwn(capacity: number): void {
    this.generation = grown(this.generation, new Uint32Array(capacity));
    this.heapIndex = grown(this.heapIndex, new Int32Array(capacity));
    this.older = grown(this.older, new Int32Array(capacity));
    this.newer = grown(this.newer, new Int32Array(capacity));
  }

  /** A slot's generation, unique across the table's eras (a copy is a number, not two). */
  private generationOf(slot: number): number {
    return this.era * 0x100000000 + this.generation[slot]!;
  }

  /** Starts over with empty columns (the table must hold nothing). */
  private giveBack(): void {
    this.era++;
    this.takeOver(new ScheduleColumns());
    this.generation = new Uint32Array(0);
    this.heapIndex = new Int32Array(0);
    this.older = new Int32Array(0);
    this.newer = new Int32Array(0);
    this.buckets = new Int32Array(0);
    this.freeHead = noSlot;
  }

  private free(slot: number): void {
    this.flags[slot] = 0;
    this.generation[slot]!++;
    this.newer[slot] = this.freeHead;
    this.freeHead = slot;
    this.count--;
  }

  /** Adds a slot to the hash table; if its id is already there, adds nothing and returns that slot. */
  private index(slot: number): number {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let bucket = this.hashOf(slot) & mask;
    for (; buckets[bucket] !== 0; bucket = (bucket + 1) & mask) {
      const other = buckets[bucket]! - 1;
      if (this.compareIds(slot, other) === 0) return other;
    }
    buckets[bucket] = slot + 1;
    return noSlot;
  }

  /** Points the hash table's entry of one slot at another slot holding the same id. */
  private replaceInIndex(slot: number, replacement: number): void {
    this.buckets[this.bucketOf(slot)] = replacement + 1;
  }

  /** Removes a slot from the hash table, shifting later entries of its run back (no tombstones). */
  private unindex(slot: number): void {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let hole = this.bucketOf(slot);
    for (let bucket = (hole + 1) & mask; buckets[bucket] !== 0; bucket = (bucket + 1) & mask) {
      const home = this.hashOf(buckets[bucket]! - 1) & mask;
      // An entry may fill the hole only if its home is not between the hole and itself.
      const reachable = hole <= bucket ? home <= hole || home > bucket : home <= hole && home > bucket;
      if (reachable) {
        buckets[hole] = buckets[bucket]!;
        hole = bucket;
      }
    }
    buckets[hole] = 0;
  }

  /** The bucket holding an indexed slot. */
  private bucketOf(slot: number): number {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let bucket = this.hashOf(slot) & mask;
    while (buckets[bucket] !== slot + 1) bucket = (bucket + 1) & mask;
    return bucket;
  }

  private hashOf(slot: number): number {
    const at = slot * idWordsPerEntry;
    return hashWords(this.idWords[at + 2]!, this.idWords[at + 3]!);
  }

  private rehash(count: number): void {
    this.buckets = new Int32Array(bucketCountFor(count));
    for (let slot = 0; slot < this.length; slot++) {
      if (this.inUse(slot)) this.index(slot);
    }
  }
}

/** Buckets for `count` ids: a power of two, at most half full. */
function bucketCountFor(count: number): number {
  let length = 16;
  while (length < count * 2) length *= 2;
  return length;
}

/** The id `find` looks for, as words (one buffer, reused). */
const wanted = new Uint32Array(idWordsPerEntry);

/** The low random words of a UUIDv7 count up within a millisecond: mixed, so runs do not cluster. */
function hashWords(w2: number, w3: number): number {
  return Math.imul(w3 ^ Math.imul(w2, 0x85ebca6b), 0x9e3779b1) ^ (w3 >>> 15);
}
