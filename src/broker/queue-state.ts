import type { PeekCursor } from "../protocol/peek-pages.js";
import { noGroup, type ScheduleColumns } from "../store/schedule-columns.js";
import type { QueueRecord, ScheduleEntry, StoredDeduplication, StoreOp } from "../store/store.js";
import { ArrivalChain } from "./arrival-chain.js";
import { FifoDeduplication } from "./fifo-deduplication.js";
import { FifoGroups } from "./fifo-groups.js";
import { MessageTable, noSlot, type LiveMessage } from "./message-table.js";
import { ReadyHeap } from "./ready-heap.js";
import { DepartureBound } from "./departure-bound.js";
import { RecentDepartures } from "./recent-departures.js";
import { rescheduleOp } from "./store-ops.js";

export type { LiveMessage } from "./message-table.js";

/** Message counts, exact at a moment. */
export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** Send time of the oldest message, or undefined when empty. */
  readonly oldestSendTime: number | undefined;
}

/**
 * The in-memory index of one queue, rebuilt from the store at start: every
 * message's schedule entry in a MessageTable, split into a heap of visible
 * messages (ready time passed) and a heap of hidden ones (leased or delayed),
 * both in ready-time order, and chained in enqueue order (an ArrivalChain),
 * so that retention and the oldest message's age read from the front. It changes
 * nothing on disk: callers write what they change.
 *
 * A FIFO queue also chains each message group in sequence order
 * (FifoGroups): receives take from groups in turn instead of from the
 * visible heap's top, and only a group's first messages, once nothing of it
 * is leased. The heaps still place every message, so counts, expiry and
 * retention work alike for both kinds.
 *
 * Messages come out as copies (LiveMessage). A rule changes a copy and hands
 * it back with `reschedule`, within the same turn of the event loop; a copy
 * kept across an await is a snapshot, and must be looked up again (`get`)
 * before it is acted on.
 */
export class QueueState {
  private readonly visible: ReadyHeap;
  private readonly hidden: ReadyHeap;
  private readonly chain: ArrivalChain;
  private leasedCount = 0;
  /** Set once the queue is deleted, for operations that were waiting on it. */
  deleted = false;
  /** A FIFO queue's groups; undefined for a standard queue (whether a queue is FIFO never changes). */
  private readonly groups: FifoGroups | undefined;
  /** A FIFO queue's last sequence number handed out (see nextSequence). */
  private lastSequence = 0;
  /** A FIFO queue's deduplication window; undefined for a standard queue. */
  readonly deduplication: FifoDeduplication | undefined;
  /** The messages that recently left by a delete or a dead-letter move, for a late Delete's answer. */
  readonly departures: RecentDepartures;

  constructor(
    public record: QueueRecord,
    private readonly table = new MessageTable(),
    departureBound = new DepartureBound(),
  ) {
    this.departures = new RecentDepartures(departureBound);
    this.visible = new ReadyHeap(table);
    this.hidden = new ReadyHeap(table);
    this.chain = new ArrivalChain(table);
    this.groups = record.config.fifo === undefined ? undefined : new FifoGroups(table);
    this.deduplication = record.config.fifo === undefined ? undefined : new FifoDeduplication();
  }

  /**
   * A queue holding the schedule a store loaded at start (its columns are
   * taken over, not copied), and a FIFO queue's deduplication records.
   */
  static loaded(
    record: QueueRecord,
    schedule: ScheduleColumns,
    now: number,
    deduplications: readonly StoredDeduplication[] = [],
    departureBound = new DepartureBound(),
  ): QueueState {
    const queue = new QueueState(record, MessageTable.loaded(schedule), departureBound);
    const { table } = queue;
    if (queue.groups !== undefined) queue.attachInSequenceOrder();
    if (queue.deduplication !== undefined) {
      queue.deduplication.load(deduplications);
      for (const record of deduplications) queue.noteSequence(record.sequence);
    }
    for (let slot = 0; slot < table.length; slot++) if (table.inUse(slot)) queue.place(slot, now);
    queue.chain.rebuild();
    return queue;
  }

  /** Whether the queue is FIFO. */
  get fifo(): boolean {
    return this.groups !== undefined;
  }

  /**
   * A FIFO queue's next sequence number: above every one handed out, and
   * at least the time in microseconds, so numbers keep increasing across
   * restarts (and a new owner in cluster mode) even once every message that
   * carried a higher one is gone. Exact in a double until the year 2255.
   */
  nextSequence(now: number): number {
    this.lastSequence = Math.max(this.lastSequence + 1, Math.floor(now) * 1000);
    return this.lastSequence;
  }

  /** A FIFO queue's last sequence number handed out or taken in. */
  get lastSequenceNumber(): number {
    return this.lastSequence;
  }

  /** Raises the last sequence number to one seen elsewhere (a deduplication record loaded at start). */
  private noteSequence(sequence: number): void {
    this.lastSequence = Math.max(this.lastSequence, sequence);
  }

  /** How many messages the queue holds. */
  get size(): number {
    return this.table.count;
  }

  /** A copy of the message with that id, if the queue holds it. */
  get(id: string): LiveMessage | undefined {
    const slot = this.table.find(id);
    return slot === noSlot ? undefined : this.table.read(slot);
  }

  /** Adds a message that arrived now (sent, or moved here), placed by its ready time. */
  add(entry: ScheduleEntry, now: number): void {
    const slot = this.table.insert(entry);
    this.chain.insert(slot);
    if (this.groups !== undefined) this.attach(slot);
    this.place(slot, now);
  }

  /**
   * Puts back messages that were taken out and could not leave (their move
   * found no queue to go to), where their arrival places them.
   */
  putBack(messages: readonly ScheduleEntry[], now: number): void {
    if (messages.length === 0) return;
    for (const message of messages) {
      const slot = this.table.insert(message);
      if (this.groups !== undefined) this.attach(slot);
      this.place(slot, now);
    }
    // Rare (a source or dead-letter queue deleted meanwhile), so a full re-sort is cheap enough.
    this.chain.rebuild();
  }

  /** Removes the message a current copy was read from. */
  remove(message: LiveMessage): void {
    const slot = this.slotOf(message);
    this.unplace(slot);
    this.chain.remove(slot);
    this.groups?.detach(slot);
    this.table.release(slot);
  }

  /**
   * Writes a current copy back with a new ready time and lease state,
   * re-places it, and returns the write that moves its index entry on disk
   * from the old ready time, for the caller to commit. The write carries the
   * copy, so a change made to it before the commit (a checkpoint's flag) is
   * written too; see rescheduleOp.
   */
  reschedule(message: LiveMessage, readyAt: number, leased: boolean, now: number): StoreOp {
    const slot = this.slotOf(message);
    const fromReadyAt = this.table.readyAt[slot]!;
    this.unplace(slot);
    message.readyAt = readyAt;
    message.leased = leased;
    this.table.store(slot, message);
    this.place(slot, now);
    return rescheduleOp(this.record.dataId, fromReadyAt, message);
  }

  /**
   * Marks a copy's message as having a saved checkpoint: the copy itself
   * (which a pending write or a dead-letter move may carry), and the queue's
   * own state while the queue still holds the message (a release may just
   * have sent it to the dead-letter queue).
   */
  noteCheckpoint(message: LiveMessage): void {
    message.hasCheckpoint = true;
    if (this.table.holds(message)) this.table.store(message.slot, message);
  }

  /**
   * A copy of the visible message a receive may take next, if any: in a
   * standard queue the next in ready-time order; in a FIFO queue, the one
   * behind `taken` (the message this receive took last) in its group if it
   * is visible, else the first message of the next ready group.
   */
  nextVisible(taken?: LiveMessage): LiveMessage | undefined {
    const slot =
      this.groups === undefined
        ? this.visible.peek()
        : this.groups.nextDeliverable(taken !== undefined && this.table.holds(taken) ? taken.slot : noSlot);
    return slot === noSlot ? undefined : this.table.read(slot);
  }

  /**
   * Takes a message nextVisible just gave out of both heaps; the caller must
   * reschedule it (or remove it). Taking before placing keeps a receive with
   * a visibility timeout of 0 from meeting the same message twice.
   */
  take(message: LiveMessage): void {
    const slot = this.slotOf(message);
    this.groups?.take(slot);
    this.unplace(slot);
  }

  /** Puts a message `take` took back where it was, unchanged (nothing was written for it). */
  untake(message: LiveMessage, now: number): void {
    this.place(this.slotOf(message), now);
  }

  /**
   * Moves every hidden message whose ready time has come to the visible heap,
   * and returns copies of those whose lease ran out (expired leases).
   */
  advance(now: number): LiveMessage[] {
    const expired: LiveMessage[] = [];
    const table = this.table;
    for (let top = this.hidden.peek(); top !== noSlot && table.readyAt[top]! <= now; top = this.hidden.peek()) {
      this.unplace(top);
      const leased = table.isLeased(top);
      table.clearLeased(top);
      if (leased) expired.push(table.read(top));
      this.place(top, now);
    }
    return expired;
  }

  /** A copy of the message that arrived first (retention counts from its arrival), if any. */
  oldestMessage(): LiveMessage | undefined {
    const oldest = this.chain.oldest;
    return oldest === noSlot ? undefined : this.table.read(oldest);
  }

  /**
   * Hands copies of the messages that arrived after `cursor` (all of them
   * without one) to `take`, oldest first, until it returns false. A cursor
   * whose message is still here at that place resumes right after it;
   * otherwise after where it would be, by arrival and id. Synchronous: the
   * chain cannot change under the walk.
   */
  walkEnqueued(cursor: PeekCursor | undefined, take: (message: LiveMessage) => boolean): void {
    const table = this.table;
    for (let slot = this.chain.startAfter(cursor); slot !== noSlot; slot = table.newer[slot]!) {
      if (!take(table.read(slot))) return;
    }
  }

  /** The ready time of the earliest hidden message: when advance next has work. */
  nextReadyAt(): number | undefined {
    const slot = this.hidden.peek();
    return slot === noSlot ? undefined : this.table.readyAt[slot];
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
    const oldest = this.chain.oldest;
    return {
      visible: this.visible.size,
      inFlight: this.leasedCount,
      delayed: this.hidden.size - this.leasedCount,
      oldestSendTime: oldest === noSlot ? undefined : this.table.sendTime[oldest],
    };
  }

  /** Forgets every message (purge and delete). */
  clear(): void {
    this.visible.clear();
    this.hidden.clear();
    this.table.clear();
    this.groups?.clear();
    this.deduplication?.clear();
    this.chain.clear();
    this.leasedCount = 0;
  }

  /** The slot a copy was read from; a copy of a message since removed is a bug in the caller. */
  private slotOf(message: LiveMessage): number {
    if (!this.table.holds(message))
      throw new Error(`message ${message.id} is no longer in queue "${this.record.name}"`);
    return message.slot;
  }

  private place(slot: number, now: number): void {
    const table = this.table;
    const leased = table.isLeased(slot);
    // A lease whose time is up still goes to the hidden heap, so that the next
    // advance reports it expired (after a restart, say) and its rules run.
    if (table.readyAt[slot]! <= now && !leased) {
      table.setInVisibleHeap(slot, true);
      this.visible.push(slot);
    } else {
      table.setInVisibleHeap(slot, false);
      this.hidden.push(slot);
      if (leased) this.leasedCount++;
    }
    this.groups?.placed(slot, leased);
  }

  private unplace(slot: number): void {
    const table = this.table;
    if (table.heapIndex[slot]! < 0) return;
    const leased = table.isLeased(slot);
    if (table.inVisibleHeap(slot)) {
      this.visible.remove(slot);
    } else {
      this.hidden.remove(slot);
      if (leased) this.leasedCount--;
    }
    this.groups?.unplaced(slot, leased);
  }

  /** Chains a message into its group and counts its sequence number as handed out. */
  private attach(slot: number): void {
    const table = this.table;
    // Only a move across shards into a queue re-created as FIFO under a
    // standard queue's name can bring a message without a group: it joins
    // the group named "" rather than break the queue's chains.
    if (!table.hasGroups || table.groupNumber[slot] === noGroup) table.writeGroup(slot, "", 0);
    this.lastSequence = Math.max(this.lastSequence, table.sequence[slot]!);
    this.groups!.attach(slot);
  }

  /** Chains every loaded message into its group, in sequence order. */
  private attachInSequenceOrder(): void {
    const { sequence } = this.table;
    for (const slot of this.table.slotsInUse().sort((a, b) => sequence[a]! - sequence[b]!)) this.attach(slot);
  }
}
