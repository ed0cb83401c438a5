/** How a lease was extended: a ChangeVisibility call or a Heartbeat renewal. */
export type ExtendedVia = "change_visibility" | "heartbeat";

/** Why a lease ended early: an explicit release (a visibility timeout of 0) by either RPC, or a broken stream. */
export type ReleaseReason = "change_visibility" | "heartbeat" | "disconnect";

/**
 * What the broker tells an observer as messages move, for metrics. Each
 * call is made when the rule runs, in memory, with plain values only, so an
 * observer needs to know nothing of the broker's types. Times are in
 * milliseconds of the broker's clock.
 */
export interface BrokerEvents {
  /**
   * Messages were stored by a Send or SendBatch; `deduplicated` more (FIFO
   * queues) repeated a deduplication id of the window and were not stored.
   */
  sent(queue: string, count: number, deduplicated?: number): void;
  /** A message was delivered; `queueWaitMs` (ready to delivery) only on its first delivery. */
  delivered(queue: string, receiveCount: number, queueWaitMs: number | undefined): void;
  /** A receive (after any long poll) found nothing to deliver. */
  emptyReceive(queue: string): void;
  /** A leased message was deleted, `processingMs` after its delivery. */
  deleted(queue: string, processingMs: number): void;
  /** Messages moved to a dead-letter queue after too many deliveries. */
  deadLettered(queue: string, deadLetterQueue: string, count: number): void;
  /**
   * Messages arrived in a queue this broker serves from another queue: dead-lettered into it,
   * redriven, or moved by a task or by MoveMessage (counted once they show there; across brokers, by the one that takes them in).
   */
  arrived(queue: string, count: number): void;
  /** Messages were moved out of a queue by a message move task. */
  movedByTask(queue: string, count: number): void;
  /** Messages were removed because their retention ran out. */
  retentionExpired(queue: string, count: number): void;
  /** A lease ran out, and its message became visible `latenessMs` after the deadline. */
  leaseExpired(queue: string, latenessMs: number): void;
  /** A lease was extended. */
  leaseExtended(queue: string, via: ExtendedVia): void;
  /** A lease was ended before its deadline without a delete. */
  leaseReleased(queue: string, reason: ReleaseReason): void;
  /** Messages were pushed to a Subscribe stream (each also counts as delivered). */
  pushed(queue: string, count: number): void;
  /** A Subscribe stream acked messages (each delete that happens also counts as deleted). */
  streamAcked(queue: string, count: number): void;
  /** A Subscribe stream's credit ran out: it gets nothing more until it settles what it holds. */
  creditFilled(queue: string): void;
}

const ignore = (): void => undefined;

/** Events that go nowhere: the default when nothing observes the broker. */
export const ignoredBrokerEvents: BrokerEvents = {
  sent: ignore,
  delivered: ignore,
  emptyReceive: ignore,
  deleted: ignore,
  deadLettered: ignore,
  arrived: ignore,
  movedByTask: ignore,
  retentionExpired: ignore,
  leaseExpired: ignore,
  leaseExtended: ignore,
  leaseReleased: ignore,
  pushed: ignore,
  streamAcked: ignore,
  creditFilled: ignore,
};
