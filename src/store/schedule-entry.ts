/**
 * A message's mutable lease state, stored as the value of its deadline index
 * entry (keyed by ready time), apart from the body, so that a receive or an
 * extension rewrites a few dozen bytes and never the body. Times are epoch
 * milliseconds; 0 means never.
 */
export interface ScheduleEntry {
  /** 32 hex digits. */
  readonly id: string;
  /** When the message becomes (or became) visible. */
  readyAt: number;
  /** Hidden by a lease (Receive, ChangeVisibility) rather than by a delay. */
  leased: boolean;
  receiveCount: number;
  /** Deliveries ever made; the fence of receipt handles. */
  epoch: number;
  readonly sendTime: number;
  /** When the message entered this queue: retention counts from here. */
  readonly enqueuedAt: number;
  firstReceiveAt: number;
  /** When the current lease was issued: max_lease_duration counts from here. */
  leaseStart: number;
  /** Body plus attribute keys and values and typed attributes' names, data types and values, in bytes. */
  readonly size: number;
  /** Whether a consumer saved a checkpoint (kept apart, so renewals without one do not rewrite it). */
  hasCheckpoint: boolean;
  /**
   * FIFO queues: the message's group, and its sequence number in this queue
   * (increasing in send order; delivery order within the group). Undefined
   * in a standard queue.
   */
  readonly group?: string | undefined;
  readonly sequence?: number | undefined;
}
