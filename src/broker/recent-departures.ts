import type { DeleteOutcome } from "./delete-outcome.js";
import { DepartureBound } from "./departure-bound.js";

/** How a message left its queue, as far as a late Delete needs to know. */
export type Departure = "deleted" | "dead-lettered";

/** One message that left: the delivery (epoch) it left under, how, and when. */
interface DepartureRecord {
  readonly id: string;
  readonly epoch: number;
  readonly how: Departure;
  readonly at: number;
}

/** Deletes remembered per queue, and for how long: a retried Delete comes within seconds. */
export const deletesKept = { count: 1024, ms: 10 * 60_000 } as const;
/** Dead-letter moves remembered per queue, and for how long: a late Delete comes when a handler that outlived its lease ends. */
export const deadLettersKept = { count: 1024, ms: 60 * 60_000 } as const;

/**
 * A bounded memory of the messages that recently left one queue by a delete
 * or a dead-letter move, so that a Delete of a message no longer there can
 * say what happened to it instead of answering OK blindly. Deletes and
 * dead-letter moves are kept apart: a busy queue's deletes would otherwise
 * push out the rare dead-letter moves a late Delete most needs to hear of.
 * Each is capped by count and age (about 150 bytes a record), and every
 * queue's together by the broker's DepartureBound; records past their age go
 * as the queue notes or looks up a departure. It lives in memory only: after
 * a restart or a takeover it starts empty, and a Delete of a message that
 * left before then is told "no longer held".
 */
export class RecentDepartures {
  private readonly deletes = new Map<string, DepartureRecord>();
  private readonly deadLetters = new Map<string, DepartureRecord>();

  constructor(private readonly bound = new DepartureBound()) {}

  /** Remembers that a message left under delivery `epoch`. */
  note(id: string, epoch: number, how: Departure, now: number): void {
    const records = how === "deleted" ? this.deletes : this.deadLetters;
    const replaced = records.get(id);
    if (replaced !== undefined) {
      records.delete(id);
      this.bound.removed(replaced);
    }
    const record = { id, epoch, how, at: now };
    records.set(id, record);
    this.bound.added(record, records);
    this.prune(records, how === "deleted" ? deletesKept : deadLettersKept, now);
  }

  /** Forgets that a message left under delivery `epoch` as `how` says: it did not, in the end. */
  withdraw(id: string, epoch: number, how: Departure): void {
    const records = how === "deleted" ? this.deletes : this.deadLetters;
    const record = records.get(id);
    if (record === undefined || record.epoch !== epoch) return;
    records.delete(id);
    this.bound.removed(record);
  }

  /** What a Delete of delivery `epoch` of a message no longer in the queue did. */
  outcome(id: string, epoch: number, now: number): DeleteOutcome {
    this.prune(this.deletes, deletesKept, now);
    this.prune(this.deadLetters, deadLettersKept, now);
    const deleted = this.deletes.get(id);
    const deadLettered = this.deadLetters.get(id);
    // Both can be known of one message (dead-lettered, redriven back, deleted): the later tells.
    const record =
      deleted === undefined || (deadLettered !== undefined && deadLettered.at > deleted.at) ? deadLettered : deleted;
    if (record === undefined || record.epoch < epoch) return "no-longer-held";
    if (record.epoch > epoch) return "received-again";
    return record.how === "deleted" ? "already-deleted" : "dead-lettered";
  }

  /** The records held now, deletes and dead-letter moves together. */
  get size(): number {
    return this.deletes.size + this.deadLetters.size;
  }

  /** Forgets the oldest records past `kept`'s count or age. */
  private prune(
    records: Map<string, DepartureRecord>,
    kept: { readonly count: number; readonly ms: number },
    now: number,
  ): void {
    // A Map iterates in insertion order, so the oldest records are first.
    for (const [oldest, record] of records) {
      if (records.size <= kept.count && record.at > now - kept.ms) break;
      records.delete(oldest);
      this.bound.removed(record);
    }
  }
}
