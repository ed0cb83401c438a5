/** The records kept of messages that left, broker-wide: past this the oldest are forgotten, whichever queue they are of. */
export const departuresKeptPerBroker = 100_000;

/** One remembered departure as the broker-wide bound tracks it: the map that holds it, under its id. */
export interface BoundRecord {
  readonly id: string;
}

/**
 * The one bound on every queue's RecentDepartures of a broker: records in
 * the order they were noted, all queues together, so that many queues (each
 * within its own bound, or idle and never asked, so never pruned) hold at
 * most `cap` records between them (about 15 MB at the default). Past it the
 * oldest record goes, from whichever queue holds it.
 */
export class DepartureBound {
  private readonly order = new Map<BoundRecord, Map<string, BoundRecord>>();

  constructor(private readonly cap = departuresKeptPerBroker) {}

  /** The records held now, all queues together. */
  get size(): number {
    return this.order.size;
  }

  /** `record` was just put in `records` under its id: forgets the oldest records past the cap. */
  added(record: BoundRecord, records: Map<string, BoundRecord>): void {
    this.order.set(record, records);
    // A Map iterates in insertion order, so the oldest records are first.
    for (const [oldest, holder] of this.order) {
      if (this.order.size <= this.cap) break;
      this.order.delete(oldest);
      if (holder.get(oldest.id) === oldest) holder.delete(oldest.id);
    }
  }

  /** `record` left its queue's records (replaced, or pruned by its queue's own bound). */
  removed(record: BoundRecord): void {
    this.order.delete(record);
  }
}
