import type { MessageTable } from "./message-table.js";
import { noSlot } from "./message-table.js";

/**
 * The message groups of a FIFO queue: which message of each group may be
 * delivered next, and which groups may deliver now, in turn.
 *
 * Each group chains its messages in sequence order (send order). A group is
 * ready when none of its messages is leased and its first message is in the
 * queue's visible heap: only that message may be delivered, and after it the
 * ones behind it in the same receive. Ready groups wait in a ring, oldest
 * ready first, so that a group with a deep backlog takes its turn like any
 * other and cannot starve the rest.
 *
 * QueueState reports every change of a message's placement (`placed`,
 * `unplaced`) and membership (`attach`, `detach`); each may make its group
 * ready, and the group then joins the ring unless it is in it already. A group
 * in the ring may stop being ready (a delete, a lease) without leaving: the
 * ring is checked lazily when read, so every change costs O(1) whatever the
 * number of groups.
 */
/** A drained queue keeps per-slot columns up to this many slots (MessageTable keeps its own alike). */
const keptSlots = 1024;

export class FifoGroups {
  /** Per slot: the next and previous message of its group (noSlot at the ends). */
  private next = new Int32Array(0);
  private previous = new Int32Array(0);
  /** Per group number: first and last message, messages held, messages leased, whether it is in the ring. */
  private head = new Int32Array(0);
  private tail = new Int32Array(0);
  private members = new Int32Array(0);
  private leased = new Int32Array(0);
  private queued = new Uint8Array(0);
  /** Ready groups, by number, in a ring buffer. */
  private ring = new Int32Array(16);
  private ringStart = 0;
  private ringLength = 0;
  /** Messages held in all groups. */
  private held = 0;

  constructor(private readonly table: MessageTable) {}

  /** Chains a slot (whose group and sequence are written) into its group, in sequence order. */
  attach(slot: number): void {
    const table = this.table;
    this.reserveSlot(slot);
    const group = table.groupNumber[slot]!;
    this.reserveGroup(group);
    const sequence = table.sequence[slot]!;
    let before = this.tail[group]!;
    // Almost always the last: only a message put back after a failed move walks.
    while (before !== noSlot && table.sequence[before]! > sequence) before = this.previous[before]!;
    const after = before === noSlot ? this.head[group]! : this.next[before]!;
    this.previous[slot] = before;
    this.next[slot] = after;
    if (before === noSlot) this.head[group] = slot;
    else this.next[before] = slot;
    if (after === noSlot) this.tail[group] = slot;
    else this.previous[after] = slot;
    this.members[group]!++;
    this.held++;
    this.touch(group);
  }

  /** Unchains a slot from its group; the group's number is freed when it empties. */
  detach(slot: number): void {
    const group = this.table.groupNumber[slot]!;
    const before = this.previous[slot]!;
    const after = this.next[slot]!;
    if (before === noSlot) this.head[group] = after;
    else this.next[before] = after;
    if (after === noSlot) this.tail[group] = before;
    else this.previous[after] = before;
    if (--this.members[group]! === 0) {
      // Its place in the ring, if any, stays and is skipped when read; a group that reuses the number inherits it.
      this.leased[group] = 0;
      this.table.groups.release(group);
    } else {
      this.touch(group);
    }
    // A drained backlog gives its columns back; a queue that empties often but stays small keeps them.
    if (--this.held === 0 && this.next.length > keptSlots) this.clear();
  }

  /** A slot was placed in a heap (QueueState.place), leased or not. */
  placed(slot: number, leased: boolean): void {
    const group = this.table.groupNumber[slot]!;
    if (leased) this.leased[group]!++;
    this.touch(group);
  }

  /** A slot was taken out of its heap (QueueState.unplace); `leased` as it was placed. */
  unplaced(slot: number, leased: boolean): void {
    const group = this.table.groupNumber[slot]!;
    if (leased) this.leased[group]!--;
    this.touch(group);
  }

  /**
   * The slot a receive may take next: after `taken` (the message it took
   * last), the one behind it in its group if that one is visible; otherwise
   * the first message of the first ready group. noSlot if none. Reading
   * changes nothing but the ring's stale entries: `take` must follow for
   * the slot to leave the ring.
   */
  nextDeliverable(taken: number): number {
    if (taken !== noSlot && taken < this.next.length) {
      const behind = this.next[taken]!;
      if (behind !== noSlot && this.isVisible(behind)) return behind;
    }
    while (this.ringLength > 0) {
      const group = this.ring[this.ringStart]!;
      if (this.isReady(group)) return this.head[group]!;
      this.dequeue();
    }
    return noSlot;
  }

  /** A receive takes a slot nextDeliverable gave: its group leaves the ring if it is there first. */
  take(slot: number): void {
    if (this.ringLength > 0 && this.head[this.ring[this.ringStart]!] === slot) this.dequeue();
  }

  /** Forgets every group (purge and delete); the table forgets its group names itself. */
  clear(): void {
    this.next = new Int32Array(0);
    this.previous = new Int32Array(0);
    this.head = new Int32Array(0);
    this.tail = new Int32Array(0);
    this.members = new Int32Array(0);
    this.leased = new Int32Array(0);
    this.queued = new Uint8Array(0);
    this.ringStart = this.ringLength = 0;
    this.held = 0;
  }

  /** Whether a group may deliver now: nothing of it leased, and its first message visible. */
  private isReady(group: number): boolean {
    if (this.members[group] === 0 || this.leased[group] !== 0) return false;
    return this.isVisible(this.head[group]!);
  }

  private isVisible(slot: number): boolean {
    return this.table.heapIndex[slot]! >= 0 && this.table.inVisibleHeap(slot);
  }

  /** Puts a group that became ready at the end of the ring, unless it is in it. */
  private touch(group: number): void {
    if (this.queued[group] === 1 || !this.isReady(group)) return;
    this.queued[group] = 1;
    if (this.ringLength === this.ring.length) this.growRing();
    this.ring[(this.ringStart + this.ringLength++) % this.ring.length] = group;
  }

  private dequeue(): void {
    const group = this.ring[this.ringStart]!;
    this.queued[group] = 0;
    this.ringStart = (this.ringStart + 1) % this.ring.length;
    this.ringLength--;
  }

  private growRing(): void {
    const ring = new Int32Array(this.ring.length * 2);
    for (let index = 0; index < this.ringLength; index++)
      ring[index] = this.ring[(this.ringStart + index) % this.ring.length]!;
    this.ring = ring;
    this.ringStart = 0;
  }

  private reserveSlot(slot: number): void {
    if (slot < this.next.length) return;
    // Doubling, so that building a backlog of n messages copies O(n) in all.
    const length = Math.max(16, slot + 1, this.next.length * 2);
    this.next = copied(this.next, new Int32Array(length));
    this.previous = copied(this.previous, new Int32Array(length));
  }

  private reserveGroup(group: number): void {
    if (group < this.head.length) return;
    let length = Math.max(16, this.head.length);
    while (length <= group) length *= 2;
    this.head = copied(this.head, new Int32Array(length).fill(noSlot));
    this.tail = copied(this.tail, new Int32Array(length).fill(noSlot));
    this.members = copied(this.members, new Int32Array(length));
    this.leased = copied(this.leased, new Int32Array(length));
    this.queued = copied(this.queued, new Uint8Array(length));
  }
}

function copied<T extends Int32Array | Uint8Array>(old: T, replacement: T): T {
  replacement.set(old as never);
  return replacement;
}
