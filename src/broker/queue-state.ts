import type { QueueRecord, ScheduleEntry, StoreOp } from "../store/store.js";
import type { Timer } from "../time/clock.js";
import { IndexedHeap, type HeapItem } from "./indexed-heap.js";
import { rescheduleOp } from "./store-ops.js";

/** A message as the broker holds it in memory: its schedule entry and its place in a heap. */
export interface LiveMessage extends ScheduleEntry, HeapItem {
  /** Whether it sits in the visible heap (else in the hidden one). */
  inVisibleHeap: boolean;
}

/** Message counts, exact at a moment. */
export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** Send time of the oldest message, or undefined when empty. */
  readonly oldestSendTime: number | undefined;
}

const readyOrder = (a: LiveMessage, b: LiveMessage): boolean =>
  a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.id < b.id);

/** Enqueue order, the order of `QueueState.messages`: by arrival, then id, then delivery (two entries of one message side by side). */
export const enqueueOrder = (a: ScheduleEntry, b: ScheduleEntry): number =>
  a.enqueuedAt - b.enqueuedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : a.epoch - b.epoch);

/**
 * The in-memory index of one queue, rebuilt from the store at start: every
 * message's schedule entry, split into a heap of visible messages (ready time
 * passed) and a heap of hidden ones (leased or delayed), both in ready-time
 * order. It changes nothing on disk: callers write what they change.
 */
export class QueueState {
  /** In enqueue order, so retention expiry reads from the front. */
  readonly messages = new Map<string, LiveMessage>();
  private readonly visible = new IndexedHeap<LiveMessage>(readyOrder);
  private readonly hidden = new IndexedHeap<LiveMessage>(readyOrder);
  private leasedCount = 0;
  /** Set once the queue is deleted, for operations that were waiting on it. */
  deleted = false;
  /** The maintenance timer armed for the earliest hidden ready time, if any. */
  wake: { readonly at: number; readonly timer: Timer } | undefined;

  constructor(public record: QueueRecord) {}

  /** Adds a copy of a message's entry and places it by its ready time. */
  add(entry: ScheduleEntry, now: number): LiveMessage {
    return this.adopt({ ...entry }, now);
  }

  /**
   * Adds a message whose entry object nobody else holds (loaded at start, or
   * just sent), turning that object itself into the live message: at a
   * restart with a million messages, a million fewer objects to make and
   * collect.
   */
  adopt(entry: ScheduleEntry, now: number): LiveMessage {
    const message = entry as LiveMessage;
    message.heapIndex = -1;
    message.inVisibleHeap = false;
    this.messages.set(message.id, message);
    this.place(message, now);
    return message;
  }

  /**
   * Puts back messages that were taken out and could not leave (their move
   * found no queue to go to), where their arrival places them: retention
   * and the oldest message's age read `messages` from the front.
   */
  putBack(messages: readonly ScheduleEntry[], now: number): void {
    if (messages.length === 0) return;
    for (const message of messages) this.add(message, now);
    // Rare (a source or dead-letter queue deleted meanwhile), so a full re-sort is cheap enough.
    const ordered = [...this.messages.values()].sort(enqueueOrder);
    this.messages.clear();
    for (const message of ordered) this.messages.set(message.id, message);
  }

  /** Removes a message from the index. */
  remove(message: LiveMessage): void {
    this.unplace(message);
    this.messages.delete(message.id);
  }

  /**
   * Sets a message's ready time and whether a lease hides it, re-places it,
   * and returns the write that moves its index entry on disk from the old
   * ready time, for the caller to commit. The write carries the live message,
   * so it stores the state the message has when the batch is committed (see
   * rescheduleOp).
   */
  reschedule(message: LiveMessage, readyAt: number, leased: boolean, now: number): StoreOp {
    const fromReadyAt = message.readyAt;
    this.unplace(message);
    message.readyAt = readyAt;
    message.leased = leased;
    this.place(message, now);
    return rescheduleOp(this.record.dataId, fromReadyAt, message);
  }

  /**
   * Takes the next visible message out of both heaps; the caller must
   * reschedule it. Taking before placing keeps a receive with a visibility
   * timeout of 0 from meeting the same message twice.
   */
  takeNextVisible(): LiveMessage | undefined {
    const next = this.visible.peek();
    if (next !== undefined) this.unplace(next);
    return next;
  }

  /**
   * Moves every hidden message whose ready time has come to the visible heap,
   * and returns those whose lease ran out (expired leases).
   */
  advance(now: number): LiveMessage[] {
    const expired: LiveMessage[] = [];
    for (let top = this.hidden.peek(); top !== undefined && top.readyAt <= now; top = this.hidden.peek()) {
      this.unplace(top);
      if (top.leased) expired.push(top);
      top.leased = false;
      this.place(top, now);
    }
    return expired;
  }

  /** The visible message that is next in ready-time order, if any. */
  nextVisible(): LiveMessage | undefined {
    return this.visible.peek();
  }

  /** The ready time of the earliest hidden message: when advance next has work. */
  nextReadyAt(): number | undefined {
    return this.hidden.peek()?.readyAt;
  }

  /** How many messages are hidden by a lease right now. */
  get inFlight(): number {
    return this.leasedCount;
  }

  get visibleCount(): number {
    return this.visible.size;
  }

  /** Counts as of the last advance. */
  counts(): QueueCounts {
    const oldest = this.messages.values().next();
    return {
      visible: this.visible.size,
      inFlight: this.leasedCount,
      delayed: this.hidden.size - this.leasedCount,
      oldestSendTime: oldest.done ? undefined : oldest.value.sendTime,
    };
  }

  /** Forgets every message (purge and delete). */
  clear(): void {
    this.visible.clear();
    this.hidden.clear();
    this.messages.clear();
    this.leasedCount = 0;
  }

  private place(message: LiveMessage, now: number): void {
    // A lease whose time is up still goes to the hidden heap, so that the next
    // advance reports it expired (after a restart, say) and its rules run.
    if (message.readyAt <= now && !message.leased) {
      message.inVisibleHeap = true;
      this.visible.push(message);
    } else {
      message.inVisibleHeap = false;
      this.hidden.push(message);
      if (message.leased) this.leasedCount++;
    }
  }

  private unplace(message: LiveMessage): void {
    if (message.heapIndex < 0) return;
    if (message.inVisibleHeap) {
      this.visible.remove(message);
    } else {
      this.hidden.remove(message);
      if (message.leased) this.leasedCount--;
    }
  }
}
