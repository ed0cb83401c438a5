/** An item that knows its own place in an IndexedHeap, so it can be moved or removed in O(log n). */
export interface HeapItem {
  heapIndex: number;
}

/**
 * A binary min-heap whose items record their index, so that an item whose key
 * changed can be re-sifted, or removed, without a search and without leaving
 * stale entries behind (leases are extended constantly).
 */
export class IndexedHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.siftUp(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Removes an item that is in this heap. */
  remove(item: T): void {
    const index = item.heapIndex;
    const last = this.items.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[index] = last;
    last.heapIndex = index;
    this.update(last);
  }

  /** Restores the heap order after an item's key changed. */
  update(item: T): void {
    this.siftUp(item.heapIndex);
    this.siftDown(item.heapIndex);
  }

  /** Removes every item. */
  clear(): void {
    for (const item of this.items) item.heapIndex = -1;
    this.items.length = 0;
  }

  private siftUp(index: number): void {
    const items = this.items;
    const item = items[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex]!;
      if (!this.before(item, parent)) break;
      items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    items[index] = item;
    item.heapIndex = index;
  }

  private siftDown(index: number): void {
    const items = this.items;
    const item = items[index]!;
    const length = items.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      const right = child + 1;
      if (right < length && this.before(items[right]!, items[child]!)) child = right;
      const smaller = items[child]!;
      if (!this.before(smaller, item)) break;
      items[index] = smaller;
      smaller.heapIndex = index;
      index = child;
    }
    items[index] = item;
    item.heapIndex = index;
  }
}
