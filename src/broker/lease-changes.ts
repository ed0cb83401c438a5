import { HoldshelfError } from "../errors/holdshelf-error.js";
import { LeaseEnding, leaseGoneReasons } from "../protocol/lease-state-reason.js";
import type { StoreOp } from "../store/store.js";
import type { BrokerEvents, ExtendedVia } from "./broker-events.js";
import type { Clock } from "../time/clock.js";
import { findDelivery, findLeasedMessage } from "./lease-fence.js";
import type { LeaseEndings } from "./lease-endings.js";
import type { LeaseStream, LeaseTracking, TrackedLease } from "./lease-tracking.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import type { ReceiptHandles } from "./receipt-handles.js";
import { isSpent } from "./queue-config.js";
import {
  checkAckCount,
  checkBatchSize,
  checkCheckpoint,
  checkRenewalCount,
  checkRetryDelay,
  checkVisibilityTimeout,
  requireVisibilityTimeout,
} from "./request-limits.js";
import { removeMessageOp } from "./store-ops.js";
import type { DeleteOutcome, EntryOutcome, LeaseRenewal, LeaseState } from "./types.js";

/**
 * The rules for one lease: delete, change, renew and release. Each checks
 * the receipt handle, changes memory, and appends the write that makes the
 * change durable to `ops`; the caller commits the batch.
 */
export class LeaseChanges {
  constructor(
    private readonly clock: Clock,
    private readonly handles: ReceiptHandles,
    private readonly tracking: LeaseTracking,
    private readonly endings: LeaseEndings,
    private readonly events: BrokerEvents,
  ) {}

  /**
   * Deletes the message a handle names; nothing if it is already gone, and
   * then says why, as far as the queue's memory of recent departures knows.
   */
  delete(queue: QueueState, receiptHandle: string, ops: StoreOp[]): DeleteOutcome {
    const now = this.clock.now();
    const found = findDelivery(queue, this.handles, receiptHandle);
    const { message } = found;
    if (message === undefined) return queue.departures.outcome(found.messageId, found.epoch, now);
    queue.remove(message);
    queue.departures.note(message.id, message.epoch, "deleted", now);
    this.tracking.untrack(queue, message.id);
    ops.push(removeMessageOp(queue.record.dataId, message));
    this.events.deleted(queue.record.name, now - message.leaseStart);
    return "deleted";
  }

  /** Deletes the messages of a batch's handles, as `delete` does: one outcome per handle, in order. */
  deleteEach(queue: QueueState, receiptHandles: readonly string[], ops: StoreOp[]): EntryOutcome[] {
    checkBatchSize(receiptHandles.length, "receipt_handles");
    return receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({ deleteOutcome: this.delete(queue, receiptHandle, ops) })),
    );
  }

  /** Deletes the messages of a Subscribe request's acks, as `delete` does: one outcome per handle, in order. */
  ackEach(queue: QueueState, receiptHandles: readonly string[], ops: StoreOp[]): EntryOutcome[] {
    checkAckCount(receiptHandles.length);
    return receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({ deleteOutcome: this.delete(queue, receiptHandle, ops) })),
    );
  }

  /** Changes one lease as ChangeVisibility asks: a timeout is required (0 releases the message). Returns the new deadline. */
  changeOne(queue: QueueState, receiptHandle: string, timeoutMs: number | undefined, ops: StoreOp[]): number {
    const timeout = requireVisibilityTimeout(timeoutMs, queue.record.config);
    return this.change(queue, receiptHandle, timeout, ops, "change_visibility").deadline;
  }

  /** Changes the leases of a batch's handles, as `change` does: one outcome per handle, in order, with its new deadline. */
  changeEach(
    queue: QueueState,
    receiptHandles: readonly string[],
    timeoutMs: number | undefined,
    ops: StoreOp[],
  ): EntryOutcome[] {
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const timeout = requireVisibilityTimeout(timeoutMs, queue.record.config);
    return receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({
        leaseDeadline: this.change(queue, receiptHandle, timeout, ops, "change_visibility").deadline,
      })),
    );
  }

  /** Renews the leases of one Heartbeat request, as `renew` does: one state per renewal, in order. */
  renewEach(stream: LeaseStream, queue: QueueState, renewals: readonly LeaseRenewal[], ops: StoreOp[]): LeaseState[] {
    checkRenewalCount(renewals.length);
    return renewals.map((renewal) => this.renew(stream, queue, renewal, ops));
  }

  /** Sets a lease's deadline to now + timeout; 0 releases the message (and ends any stream's tracking of it). */
  change(
    queue: QueueState,
    receiptHandle: string,
    timeoutMs: number,
    ops: StoreOp[],
    via: ExtendedVia,
  ): { message: LiveMessage; deadline: number } {
    const message = this.existingMessage(queue, receiptHandle);
    const now = this.clock.now();
    const deadline = now + timeoutMs;
    const limit = message.leaseStart + queue.record.config.maxLeaseDurationMs;
    // A release can never hold a lease too long, however late it comes.
    if (timeoutMs > 0 && deadline > limit) {
      throw new HoldshelfError(
        "LEASE_LIMIT_EXCEEDED",
        `the lease may not run past ${new Date(limit).toISOString()}, max_lease_duration after its receive`,
      );
    }
    ops.push(queue.reschedule(message, deadline, timeoutMs > 0, now));
    if (timeoutMs === 0) {
      this.tracking.untrack(queue, message.id);
      ops.push(...this.endings.endAll(queue, [message], "released"));
      this.events.leaseReleased(queue.record.name, via);
    } else {
      this.events.leaseExtended(queue.record.name, via);
    }
    return { message, deadline };
  }

  /**
   * Renews a lease for a stream as `change` would (an unset timeout means the
   * queue's), storing its checkpoint, and tracks it on the stream while held.
   * Failures become the renewal's state instead of an error.
   */
  renew(stream: LeaseStream, queue: QueueState, renewal: LeaseRenewal, ops: StoreOp[]): LeaseState {
    const { receiptHandle, checkpoint } = renewal;
    try {
      if (checkpoint !== undefined) checkCheckpoint(checkpoint);
      if (renewal.failed === true) {
        const message = this.fail(queue, receiptHandle, renewal.visibilityTimeoutMs, ops);
        this.storeCheckpoint(queue, message, checkpoint, ops);
        return { receiptHandle, held: false, leaseDeadline: this.clock.now(), reason: LeaseEnding.RELEASED };
      }
      const timeout = renewal.visibilityTimeoutMs ?? queue.record.config.visibilityTimeoutMs;
      checkVisibilityTimeout(timeout, queue.record.config);
      const { message, deadline } = this.change(queue, receiptHandle, timeout, ops, "heartbeat");
      this.storeCheckpoint(queue, message, checkpoint, ops);
      if (timeout === 0) return { receiptHandle, held: false, leaseDeadline: deadline, reason: LeaseEnding.RELEASED };
      this.tracking.track({
        stream,
        queue,
        messageId: message.id,
        epoch: message.epoch,
        receiptHandle,
        bytes: message.size,
      });
      return { receiptHandle, held: true, leaseDeadline: deadline };
    } catch (error) {
      if (!(error instanceof HoldshelfError)) throw error;
      // Only a lease that is gone stops being tracked: one refused a bad
      // timeout or checkpoint, or an extension past its cap, is still held
      // until its deadline, and its expiry is still worth telling.
      const lost = stream.tracked.get(receiptHandle);
      if (lost !== undefined && leaseGoneReasons.has(error.reason)) this.tracking.untrack(lost.queue, lost.messageId);
      return { receiptHandle, held: false, reason: error.reason };
    }
  }

  /**
   * Ends a lease as a failed delivery (a renewal with `failed`): the message
   * is visible again after delayMs, or after the queue's retry backoff when
   * undefined, or leaves for the dead-letter queue at once if spent.
   */
  private fail(queue: QueueState, receiptHandle: string, delayMs: number | undefined, ops: StoreOp[]): LiveMessage {
    if (delayMs !== undefined) checkRetryDelay(delayMs);
    const message = this.existingMessage(queue, receiptHandle);
    this.tracking.untrack(queue, message.id);
    if (delayMs === undefined || isSpent(queue.record.config, message.receiveCount)) {
      ops.push(...this.endings.endAll(queue, [message], "failed"));
    } else {
      const now = this.clock.now();
      ops.push(queue.reschedule(message, now + delayMs, false, now));
    }
    this.events.leaseReleased(queue.record.name, "heartbeat");
    return message;
  }

  /** The message a handle names, fenced; MESSAGE_NOT_FOUND if it no longer exists. */
  private existingMessage(queue: QueueState, receiptHandle: string): LiveMessage {
    const message = findLeasedMessage(queue, this.handles, receiptHandle);
    if (message === undefined) {
      throw new HoldshelfError("MESSAGE_NOT_FOUND", "the message of this receipt handle no longer exists");
    }
    return message;
  }

  private storeCheckpoint(
    queue: QueueState,
    message: LiveMessage,
    checkpoint: Uint8Array | undefined,
    ops: StoreOp[],
  ): void {
    if (checkpoint === undefined) return;
    queue.noteCheckpoint(message);
    ops.push({ kind: "putCheckpoint", dataId: queue.record.dataId, id: message.id, checkpoint });
  }

  /**
   * Ends the leases a broken stream held, as their queues' rules say (at
   * once, after a backoff, or to the dead-letter queue), skipping any whose
   * message was since deleted or delivered again: another consumer's later
   * delivery is never released. Returns the writes, by queue.
   */
  release(leases: readonly TrackedLease[]): Map<QueueState, StoreOp[]> {
    const opsByQueue = new Map<QueueState, StoreOp[]>();
    for (const { queue, messageId, epoch } of leases) {
      const message = queue.get(messageId);
      if (queue.deleted || message === undefined || message.epoch !== epoch || !message.leased) continue;
      const ops = opsByQueue.get(queue) ?? [];
      ops.push(...this.endings.endAll(queue, [message], "disconnected"));
      opsByQueue.set(queue, ops);
      this.events.leaseReleased(queue.record.name, "disconnect");
    }
    return opsByQueue;
  }
}

/** Runs one batch entry, turning a HoldshelfError into that entry's outcome. */
function outcomeOf(
  receiptHandle: string,
  run: () => { leaseDeadline: number } | { deleteOutcome: DeleteOutcome },
): EntryOutcome {
  try {
    return { receiptHandle, ...run() };
  } catch (error) {
    if (error instanceof HoldshelfError) return { receiptHandle, error };
    throw error;
  }
}
