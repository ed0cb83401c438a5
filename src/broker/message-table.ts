import type { ScheduleEntry } from "../store/store.js";

/**
 * A message as the rules work on it: a copy of its schedule entry read out of
 * its queue's MessageTable, and the slot it was read from. Changing the copy
 * changes nothing until it is written back (QueueState.reschedule).
 */
export interface LiveMessage extends ScheduleEntry {
  readonly slot: number;
  /** The slot's generation when read: a copy outliving its message never touches the slot's next one. */
  readonly generation: number;
}

/** No slot: the end of a chain, or an empty place. */
export const noSlot = -1;

const leasedFlag = 1;
const checkpointFlag = 2;
/** In the visible heap rather than the hidden one (QueueState's placing). */
const visibleHeapFlag = 4;
/** Holds a message (else free). */
const inUseFlag = 8;
/** The flags a copy's write-back leaves alone. */
const placementFlags = visibleHeapFlag | inUseFlag;

const initialCapacity = 16;
const idWordsPerSlot = 4;

/**
 * The messages of one queue in memory, a typed array per field and a slot per
 * message, instead of an object per message: at ten million messages, objects
 * with boxed times, hex-string ids and a Map entry each took about 420 bytes
 * of heap a message and most of a restart's time. Ids are kept as four 32-bit
 * words (UUIDv7's 16 bytes) and found through an open-addressing hash table
 * of slots. Freed slots are reused; each has a generation, bumped when it is
 * freed, so a copy read before can tell its message is gone.
 *
 * The table knows nothing of order: QueueState keeps the heaps (in
 * `heapIndex`) and the enqueue-order chain (`older`, `newer`) in its columns.
 */
export class MessageTable {
  /** Messages held. */
  count = 0;
  private capacity = 0;
  /** Slots ever handed out; those below it are in use or on the free chain. */
  private used = 0;
  private freeHead = noSlot;

  readyAt = new Float64Array(0);
  sendTime = new Float64Array(0);
  enqueuedAt = new Float64Array(0);
  firstReceiveAt = new Float64Array(0);
  leaseStart = new Float64Array(0);
  receiveCount = new Uint32Array(0);
  epoch = new Uint32Array(0);
  size = new Uint32Array(0);
  generation = new Uint32Array(0);
  flags = new Uint8Array(0);
  /** The slot's place in whichever heap holds it, or -1. */
  heapIndex = new Int32Array(0);
  /** Neighbours in enqueue order (noSlot at the ends); `newer` also chains free slots. */
  older = new Int32Array(0);
  newer = new Int32Array(0);
  idWords = new Uint32Array(0);
  /** Slot + 1 of each id by hash, 0 where empty; linear probing. */
  private buckets = new Int32Array(0);

  /** Makes room for `count` messages in all, so that a load grows the columns once. */
  reserve(count: number): void {
    if (count > this.capacity) this.grow(Math.max(count, initialCapacity));
    if (count * 2 > this.buckets.length) this.rehash(count);
  }

  /** Stores a new message (its id must not be held) and returns its slot. */
  insert(entry: ScheduleEntry): number {
    this.reserve(this.count + 1);
    let slot = this.freeHead;
    if (slot !== noSlot) this.freeHead = this.newer[slot]!;
    else slot = this.used++;
    this.count++;
    const words = this.idWords;
    const at = slot * idWordsPerSlot;
    const { id } = entry;
    words[at] = parseInt(id.slice(0, 8), 16);
    words[at + 1] = parseInt(id.slice(8, 16), 16);
    words[at + 2] = parseInt(id.slice(16, 24), 16);
    words[at + 3] = parseInt(id.slice(24, 32), 16);
    this.sendTime[slot] = entry.sendTime;
    this.enqueuedAt[slot] = entry.enqueuedAt;
    this.size[slot] = entry.size;
    this.heapIndex[slot] = -1;
    this.flags[slot] = inUseFlag;
    this.store(slot, entry);
    this.index(slot);
    return slot;
  }

  /** Frees a slot: its id is no longer found and copies read from it are stale. */
  release(slot: number): void {
    this.unindex(slot);
    this.flags[slot] = 0;
    this.generation[slot]!++;
    this.newer[slot] = this.freeHead;
    this.freeHead = slot;
    this.count--;
  }

  /** Writes a copy's changeable fields back into its slot (ready time, lease state, counters). */
  store(slot: number, entry: ScheduleEntry): void {
    this.readyAt[slot] = entry.readyAt;
    this.firstReceiveAt[slot] = entry.firstReceiveAt;
    this.leaseStart[slot] = entry.leaseStart;
    this.receiveCount[slot] = entry.receiveCount;
    this.epoch[slot] = entry.epoch;
    this.flags[slot] =
      (this.flags[slot]! & placementFlags) | (entry.leased ? leasedFlag : 0) | (entry.hasCheckpoint ? checkpointFlag : 0);
  }

  /** A copy of the message in a slot. */
  read(slot: number): LiveMessage {
    const flags = this.flags[slot]!;
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
      slot,
      generation: this.generation[slot]!,
    };
  }

  /** Whether a copy was read from the message its slot holds now. */
  holds(message: LiveMessage): boolean {
    return message.slot < this.used && this.generation[message.slot] === message.generation;
  }

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

  setInVisibleHeap(slot: number, visible: boolean): void {
    this.flags[slot] = visible ? this.flags[slot]! | visibleHeapFlag : this.flags[slot]! & ~visibleHeapFlag;
  }

  /** The slot holding a message id, or noSlot. */
  find(id: string): number {
    if (this.count === 0 || id.length !== 32) return noSlot;
    const w0 = parseInt(id.slice(0, 8), 16);
    const w1 = parseInt(id.slice(8, 16), 16);
    const w2 = parseInt(id.slice(16, 24), 16);
    const w3 = parseInt(id.slice(24, 32), 16);
    const words = this.idWords;
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    for (let bucket = hashWords(w2, w3) & mask; ; bucket = (bucket + 1) & mask) {
      const slot = buckets[bucket]! - 1;
      if (slot === noSlot) return noSlot;
      const at = slot * idWordsPerSlot;
      if (words[at + 3] === w3 && words[at + 2] === w2 && words[at + 1] === w1 && words[at] === w0) return slot;
    }
  }

  /** The 32 hex digits of a slot's id. */
  idOf(slot: number): string {
    const words = this.idWords;
    const at = slot * idWordsPerSlot;
    return hex8(words[at]!) + hex8(words[at + 1]!) + hex8(words[at + 2]!) + hex8(words[at + 3]!);
  }

  /** Whether slot a's id sorts before slot b's (ids are 16 big-endian bytes, so word by word). */
  idBefore(a: number, b: number): boolean {
    return this.compareIds(a, b) < 0;
  }

  /** Id order of two slots: negative, zero or positive. */
  compareIds(a: number, b: number): number {
    const words = this.idWords;
    const atA = a * idWordsPerSlot;
    const atB = b * idWordsPerSlot;
    for (let word = 0; word < idWordsPerSlot; word++) {
      const difference = words[atA + word]! - words[atB + word]!;
      if (difference !== 0) return difference;
    }
    return 0;
  }

  /** Forgets every message, keeping the columns' room. */
  clear(): void {
    this.count = 0;
    this.used = 0;
    this.freeHead = noSlot;
    this.buckets.fill(0);
    this.flags.fill(0);
    // Copies read before the clear must not match slots handed out again.
    for (let slot = 0; slot < this.capacity; slot++) this.generation[slot]!++;
  }

  private index(slot: number): void {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let bucket = this.hashOf(slot) & mask;
    while (buckets[bucket] !== 0) bucket = (bucket + 1) & mask;
    buckets[bucket] = slot + 1;
  }

  /** Removes a slot from the hash table, shifting later entries of its run back (no tombstones). */
  private unindex(slot: number): void {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    let hole = this.hashOf(slot) & mask;
    while (buckets[hole] !== slot + 1) hole = (hole + 1) & mask;
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

  private hashOf(slot: number): number {
    const at = slot * idWordsPerSlot;
    return hashWords(this.idWords[at + 2]!, this.idWords[at + 3]!);
  }

  private rehash(count: number): void {
    let length = 16;
    while (length < count * 2) length *= 2;
    this.buckets = new Int32Array(length);
    for (let slot = 0; slot < this.used; slot++) {
      if ((this.flags[slot]! & inUseFlag) !== 0) this.index(slot);
    }
  }

  private grow(atLeast: number): void {
    let capacity = Math.max(this.capacity, initialCapacity);
    while (capacity < atLeast) capacity *= 2;
    this.capacity = capacity;
    this.readyAt = grown(this.readyAt, new Float64Array(capacity));
    this.sendTime = grown(this.sendTime, new Float64Array(capacity));
    this.enqueuedAt = grown(this.enqueuedAt, new Float64Array(capacity));
    this.firstReceiveAt = grown(this.firstReceiveAt, new Float64Array(capacity));
    this.leaseStart = grown(this.leaseStart, new Float64Array(capacity));
    this.receiveCount = grown(this.receiveCount, new Uint32Array(capacity));
    this.epoch = grown(this.epoch, new Uint32Array(capacity));
    this.size = grown(this.size, new Uint32Array(capacity));
    this.generation = grown(this.generation, new Uint32Array(capacity));
    this.flags = grown(this.flags, new Uint8Array(capacity));
    this.heapIndex = grown(this.heapIndex, new Int32Array(capacity));
    this.older = grown(this.older, new Int32Array(capacity));
    this.newer = grown(this.newer, new Int32Array(capacity));
    this.idWords = grown(this.idWords, new Uint32Array(capacity * idWordsPerSlot));
  }
}

function grown<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(old: T, replacement: T): T {
  replacement.set(old as never);
  return replacement;
}

/** The low random words of a UUIDv7 count up within a millisecond: mixed, so runs do not cluster. */
function hashWords(w2: number, w3: number): number {
  return Math.imul(w3 ^ Math.imul(w2, 0x85ebca6b), 0x9e3779b1) ^ (w3 >>> 15);
}

function hex8(word: number): string {
  return (word + 0x100000000).toString(16).slice(1);
}
