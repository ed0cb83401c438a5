import type { LiveMessage, QueueState } from "./queue-state.js";

/** What a lease stream hears from the broker. */
export interface LeaseStreamListener {
  /** Leases it tracked ran out without being renewed. */
  leasesExpired(receiptHandles: string[]): void;
  /** The broker is shutting down: end the stream, leaving leases as they are (they survive a restart). */
  brokerClosing(): void;
  /** Storage failed: end the stream with `error`; the broker reloads every lease from disk once storage works. */
  storageUnavailable?(error: unknown): void;
  /**
   * The stream stopped holding a lease for any reason but expiry (acked, released, failed, purged, taken
   * over): a Subscribe stream's credit grew. Called inside the rule that dropped it: only note it.
   */
  leaseDropped?(): void;
}

/** One lease a stream holds: a delivery (epoch) of a message, named by its receipt handle. */
export interface TrackedLease {
  readonly stream: LeaseStream;
  readonly queue: QueueState;
  readonly messageId: string;
  readonly epoch: number;
  readonly receiptHandle: string;
  /** The message's size as max_message_bytes counts it: a Subscribe stream's byte credit. */
  readonly bytes: number;
}

/**
 * A stream that holds leases (Heartbeat, Subscribe) as the broker sees it: who to tell, and which leases it
 * tracks by receipt handle, with their bytes. Only LeaseTracking changes what it holds.
 */
export class LeaseStream {
  readonly #tracked = new Map<string, TrackedLease>();
  #heldBytes = 0;

  constructor(readonly listener: LeaseStreamListener) {}

  /** The leases it holds, by receipt handle. */
  get tracked(): ReadonlyMap<string, TrackedLease> {
    return this.#tracked;
  }

  /** The bytes of the messages whose leases it holds. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Starts holding a lease (LeaseTracking.track). */
  hold(lease: TrackedLease): void {
    this.drop(lease.receiptHandle);
    this.#tracked.set(lease.receiptHandle, lease);
    this.#heldBytes += lease.bytes;
  }

  /** Stops holding a lease (LeaseTracking); `quietly` for an expiry, which the stream hears of as such. */
  drop(receiptHandle: string, quietly = false): void {
    const lease = this.#tracked.get(receiptHandle);
    if (lease === undefined) return;
    this.#tracked.delete(receiptHandle);
    this.#heldBytes -= lease.bytes;
    if (!quietly) this.listener.leaseDropped?.();
  }
}

/**
 * Which stream tracks each leased message, so that an expiry found by the
 * queue's timer reaches the stream at once, without any per-stream polling
 * (thousands of streams must cost next to nothing while nothing happens).
 */
export class LeaseTracking {
  private readonly byQueue = new Map<QueueState, Map<string, TrackedLease>>();

  /** Tracks a lease on a stream, taking it from any stream that tracked the message before. */
  track(lease: TrackedLease): void {
    let leases = this.byQueue.get(lease.queue);
    if (leases === undefined) this.byQueue.set(lease.queue, (leases = new Map()));
    const previous = leases.get(lease.messageId);
    if (previous !== undefined) previous.stream.drop(previous.receiptHandle);
    leases.set(lease.messageId, lease);
    lease.stream.hold(lease);
  }

  /** Stops tracking a message, whichever stream tracked it (deleted, released, expired by retention). */
  untrack(queue: QueueState, messageId: string, quietly = false): void {
    const leases = this.byQueue.get(queue);
    const lease = leases?.get(messageId);
    if (lease === undefined) return;
    leases!.delete(messageId);
    lease.stream.drop(lease.receiptHandle, quietly);
    if (leases!.size === 0) this.byQueue.delete(queue);
  }

  /** Tells each stream which of its leases just expired, and stops tracking them. */
  expired(queue: QueueState, messages: readonly LiveMessage[]): void {
    const leases = this.byQueue.get(queue);
    if (leases === undefined) return;
    const byStream = new Map<LeaseStream, string[]>();
    for (const message of messages) {
      const lease = leases.get(message.id);
      // An older delivery's tracking is stale: that lease was lost long ago.
      if (lease === undefined || lease.epoch !== message.epoch) continue;
      this.untrack(queue, message.id, true);
      const handles = byStream.get(lease.stream) ?? [];
      handles.push(lease.receiptHandle);
      byStream.set(lease.stream, handles);
    }
    for (const [stream, handles] of byStream) stream.listener.leasesExpired(handles);
  }

  /** Forgets every lease of a queue that was purged or deleted. */
  forgetQueue(queue: QueueState): void {
    for (const lease of this.byQueue.get(queue)?.values() ?? []) lease.stream.drop(lease.receiptHandle);
    this.byQueue.delete(queue);
  }

  /** Forgets every lease a stream tracks (the stream ended). */
  forgetStream(stream: LeaseStream): void {
    for (const lease of [...stream.tracked.values()]) this.untrack(lease.queue, lease.messageId, true);
  }
}
