import { grown } from "../store/schedule-columns.js";
import { noSlot, type MessageTable } from "./message-table.js";

const initialCapacity = 16;
/** An emptied heap with more room than this gives it back (see MessageTable.release). */
const keptCapacity = 1024;

/**
 * A binary min-heap of a MessageTable's slots in ready-time order (ties by
 * id, which keeps a SendBatch's messages in entry order). Each slot's place
 * is kept in the table's `heapIndex` column, so a slot whose ready time
 * changed can be moved, or removed, in O(log n) without a search (leases are
 * extended constantly). A slot is in at most one heap at a time.
 */
export class ReadyHeap {
  private items = new Int32Array(initialCapacity);
  size = 0;

  constructor(private readonly table: MessageTable) {}

  /** The slot that is first in ready order, or noSlot. */
  peek(): number {
    return this.size === 0 ? noSlot : this.items[0]!;
  }

  /** Adds a slot, placed by its ready time (and id). */
  push(slot: number): void {
    if (this.size === this.items.length) this.items = grown(this.items, new Int32Array(this.items.length * 2));
    this.items[this.size] = slot;
    this.table.heapIndex[slot] = this.size;
    this.size++;
    this.siftUp(this.size - 1);
  }

  /** Removes a slot that is in this heap. */
  remove(slot: number): void {
    const heapIndex = this.table.heapIndex;
    const index = heapIndex[slot]!;
    const last = this.items[--this.size]!;
    heapIndex[slot] = -1;
    if (this.size === 0 && this.items.length > keptCapacity) this.items = new Int32Array(initialCapacity);
    if (last === slot) return;
    this.items[index] = last;
    heapIndex[last] = index;
    this.siftUp(index);
    this.siftDown(heapIndex[last]!);
  }

  /** Removes every slot (their `heapIndex` is left for the table's clear). */
  clear(): void {
    this.size = 0;
    this.items = new Int32Array(initialCapacity);
  }

  private before(a: number, b: number): boolean {
    const readyAt = this.table.readyAt;
    const readyA = readyAt[a]!;
    const readyB = readyAt[b]!;
    return readyA < readyB || (readyA === readyB && this.table.idBefore(a, b));
  }

  private siftUp(index: number): void {
    const items = this.items;
    const heapIndex = this.table.heapIndex;
    const slot = items[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex]!;
      if (!this.before(slot, parent)) break;
      items[index] = parent;
      heapIndex[parent] = index;
      index = parentIndex;
    }
    items[index] = slot;
    heapIndex[slot] = index;
  }

  private siftDown(index: number): void {
    const items = this.items;
    const heapIndex = this.table.heapIndex;
    const slot = items[index]!;
    const length = this.size;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      const right = child + 1;
      if (right < length && this.before(items[right]!, items[child]!)) child = right;
      const smaller = items[child]!;
      if (!this.before(smaller, slot)) break;
      items[index] = smaller;
      heapIndex[smaller] = index;
      index = child;
    }
    items[index] = slot;
    heapIndex[slot] = index;
  }
}
