import type { StoredDeduplication, StoreOp } from "../store/store.js";
import type { DeduplicationScope } from "./queue-config.js";

/** How long a FIFO queue remembers a deduplication id: SQS's five minutes. */
export const deduplicationWindowMs = 5 * 60 * 1000;

/** The message a deduplication id names within its window. */
export interface FirstSend {
  /** 32 hex digits. */
  readonly messageId: string;
  readonly sequence: number;
  readonly expiresAt: number;
  /** Until the first send is durable: a repeat answers only once it is. */
  readonly written: Promise<void> | undefined;
}

/**
 * A FIFO queue's deduplication window: each id sent in the last five
 * minutes and the message its first send stored. Every record is also in
 * the store (written with the message, removed once expired), so the window
 * survives restarts; a purge starts the queue in a new data space, which
 * forgets them, as SQS's purge does.
 *
 * Records are kept in the order they were made, which is expiry order (each
 * lasts the same five minutes), so expiring reads only from the front.
 */
export class FifoDeduplication {
  private readonly firstSends = new Map<string, FirstSend>();

  /** The key of an id: the id itself, or under the message-group scope, the group and the id. */
  static keyOf(scope: DeduplicationScope, group: string, deduplicationId: string): string {
    // Groups are printable ASCII without spaces (checked at send), so a space cannot be part of either.
    return scope === "queue" ? deduplicationId : `${group} ${deduplicationId}`;
  }

  /**
   * Takes up the records a store loaded, in expiry order. Those already
   * expired (while the broker was down, or whose removal a shutdown cut off)
   * are taken up too: `find` ignores them, and the next `expire` removes
   * them from the store, which nothing else would.
   */
  load(records: readonly StoredDeduplication[]): void {
    const sorted = [...records].sort((a, b) => a.expiresAt - b.expiresAt);
    for (const { key, messageId, sequence, expiresAt } of sorted)
      this.firstSends.set(key, { messageId, sequence, expiresAt, written: undefined });
  }

  /** The first send of a key, while its window lasts. */
  find(key: string, now: number): FirstSend | undefined {
    const first = this.firstSends.get(key);
    return first !== undefined && first.expiresAt > now ? first : undefined;
  }

  /**
   * Remembers a key's first send, as the store op that writes it; `written`
   * is set once the commit carrying that op is started (see `written`).
   */
  remember(key: string, messageId: string, sequence: number, dataId: number, now: number): StoreOp {
    const expiresAt = now + deduplicationWindowMs;
    // Re-inserted, not overwritten: a key whose window ended goes to the back, in expiry order.
    this.firstSends.delete(key);
    this.firstSends.set(key, { messageId, sequence, expiresAt, written: undefined });
    return { kind: "putDeduplication", dataId, record: { key, messageId, sequence, expiresAt } };
  }

  /** Marks first sends as being written by `written`, so repeats wait for it. */
  writing(keys: readonly string[], written: Promise<void>): void {
    for (const key of keys) {
      const first = this.firstSends.get(key);
      if (first !== undefined) this.firstSends.set(key, { ...first, written });
    }
  }

  /** Forgets first sends whose write failed: a retry must be able to store them. */
  forget(keys: readonly string[], messageIds: ReadonlySet<string>): void {
    for (const key of keys) {
      const first = this.firstSends.get(key);
      if (first !== undefined && messageIds.has(first.messageId)) this.firstSends.delete(key);
    }
  }

  /** Forgets every record whose window has ended, and returns the ops that remove them from the store. */
  expire(dataId: number, now: number): StoreOp[] {
    const ops: StoreOp[] = [];
    for (const [key, first] of this.firstSends) {
      if (first.expiresAt > now) break;
      this.firstSends.delete(key);
      ops.push({ kind: "removeDeduplication", dataId, key });
    }
    return ops;
  }

  /** How many ids are remembered. */
  get size(): number {
    return this.firstSends.size;
  }

  /** Forgets everything (a purge: the store forgets with the data space). */
  clear(): void {
    this.firstSends.clear();
  }
}
