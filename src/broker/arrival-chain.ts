import type { PeekCursor } from "../protocol/peek-pages.js";
import { noSlot, type MessageTable } from "./message-table.js";

// The most messages a new arrival walks back past to keep the chain in
// arrival order (see insert): a move overtaken during its own commit
// passes a handful; more means a clock went back, and order yields to cost.
const maxChainWalk = 64;

/**
 * A MessageTable's slots chained in enqueue order (by arrival, then id: a
 * SendBatch's messages share an arrival time) through its `older` and
 * `newer` columns, so that retention, the oldest message's age and peek
 * pages read from the front. Like ReadyHeap it orders slots and holds no
 * message of its own.
 */
export class ArrivalChain {
  private oldestSlot = noSlot;
  private newest = noSlot;

  constructor(private readonly table: MessageTable) {}

  /** The slot that arrived first, or noSlot. */
  get oldest(): number {
    return this.oldestSlot;
  }

  /**
   * Chains a new message after the last one that arrived before it. Almost
   * always the newest: only a message whose commit overtook an earlier
   * arrival's (a move's, timed before its write) walks back, a step per
   * message it overtook. Keeping the chain in arrival order, as a restart
   * rebuilds it, is what lets a peek cursor resume where a message would be.
   * The walk is bounded: after a wall-clock step back, or an arrival stamped
   * by another broker whose clock is behind, a message that would walk past
   * more than a few dozen others is chained as the newest instead, so a send
   * never costs more than a few steps (the order is then off by that much
   * until a restart re-sorts it).
   */
  insert(slot: number): void {
    const table = this.table;
    const arrival = table.enqueuedAt[slot]!;
    const overtook = (other: number): boolean =>
      table.enqueuedAt[other]! > arrival || (table.enqueuedAt[other] === arrival && table.compareIds(other, slot) > 0);
    let before = this.newest;
    for (let steps = 0; before !== noSlot && overtook(before); steps++) {
      if (steps === maxChainWalk) return this.append(slot);
      before = table.older[before]!;
    }
    if (before === this.newest) return this.append(slot);
    const after = before === noSlot ? this.oldestSlot : table.newer[before]!;
    table.older[slot] = before;
    table.newer[slot] = after;
    table.older[after] = slot;
    if (before === noSlot) this.oldestSlot = slot;
    else table.newer[before] = slot;
  }

  /** Takes a slot out of the chain. */
  remove(slot: number): void {
    const { older, newer } = this.table;
    const before = older[slot]!;
    const after = newer[slot]!;
    if (before === noSlot) this.oldestSlot = after;
    else newer[before] = after;
    if (after === noSlot) this.newest = before;
    else older[after] = before;
  }

  /**
   * The first slot after a peek cursor (the oldest without one): right after
   * the cursor's message if it is still here at that place, otherwise after
   * where it would be, by arrival and id.
   */
  startAfter(cursor: PeekCursor | undefined): number {
    if (cursor === undefined) return this.oldestSlot;
    const table = this.table;
    const at = table.find(cursor.id);
    if (at !== noSlot && table.enqueuedAt[at] === cursor.enqueuedAt) return table.newer[at]!;
    // Gone (or back with a later arrival): a scan from whichever end of the chain the cursor's time is nearer.
    return this.firstAfter(cursor);
  }

  /** Chains every message the table holds anew, in enqueue order. */
  rebuild(): void {
    const table = this.table;
    const { enqueuedAt } = table;
    const slots = table.slotsInUse().sort((a, b) => enqueuedAt[a]! - enqueuedAt[b]! || table.compareIds(a, b));
    this.clear();
    for (const slot of slots) this.append(slot);
  }

  /** Forgets every slot (the table is being cleared). */
  clear(): void {
    this.oldestSlot = this.newest = noSlot;
  }

  private append(slot: number): void {
    const { older, newer } = this.table;
    older[slot] = this.newest;
    newer[slot] = noSlot;
    if (this.newest === noSlot) this.oldestSlot = slot;
    else newer[this.newest] = slot;
    this.newest = slot;
  }

  /** The first slot whose message sorts after the cursor, scanning from the nearer end of the chain. */
  private firstAfter(cursor: PeekCursor): number {
    const table = this.table;
    if (this.oldestSlot === noSlot) return noSlot;
    const fromOldest = cursor.enqueuedAt - table.enqueuedAt[this.oldestSlot]!;
    const fromNewest = table.enqueuedAt[this.newest]! - cursor.enqueuedAt;
    if (fromNewest < fromOldest) {
      let back = this.newest;
      while (back !== noSlot && this.slotAfter(back, cursor)) back = table.older[back]!;
      return back === noSlot ? this.oldestSlot : table.newer[back]!;
    }
    let slot = this.oldestSlot;
    while (slot !== noSlot && !this.slotAfter(slot, cursor)) slot = table.newer[slot]!;
    return slot;
  }

  /** Whether a slot's message sorts after a cursor, read from the columns (a scan may pass millions). */
  private slotAfter(slot: number, cursor: PeekCursor): boolean {
    const arrival = this.table.enqueuedAt[slot]!;
    return arrival > cursor.enqueuedAt || (arrival === cursor.enqueuedAt && this.table.idOf(slot) > cursor.id);
  }
}
