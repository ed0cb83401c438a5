import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import type { Store, StoredState, StoreOp } from "../store/store.js";
import { systemClock, type Clock } from "./clock.js";
import { findLeasedMessage } from "./lease-fence.js";
import { LeaseStream, LeaseTracking, type LeaseStreamListener } from "./lease-tracking.js";
import { Maintenance } from "./maintenance.js";
import { formatMessageId, newMessageId } from "./message-id.js";
import type { QueueConfigInput } from "./queue-config.js";
import { QueueRegistry } from "./queue-registry.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import { ReceiptHandles } from "./receipt-handles.js";
import { removeMessageOp, rescheduleOp } from "./store-ops.js";
import {
  checkBatchSize,
  checkCheckpoint,
  checkRenewalCount,
  checkOutgoing,
  checkVisibilityTimeout,
  maxSendBatchBytes,
  perMessageOverheadBytes,
  receiveResponseBudgetBytes,
  resolveReceiveOptions,
} from "./request-limits.js";
import type {
  Delivery,
  EntryOutcome,
  LeaseRenewal,
  LeaseState,
  OutgoingMessage,
  QueueInfo,
  QueuePage,
  ReceiveOptions,
} from "./types.js";
import { WaitingReceives } from "./waiting-receives.js";

/** What a Broker is built on. */
export interface BrokerOptions {
  readonly store: Store;
  readonly clock?: Clock;
  /** Told of failures in background work (timers, cleanup), which have no caller to answer. */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** Messages a receive has leased in memory, and the write that makes the leases durable. */
interface Taken {
  readonly messages: LiveMessage[];
  /** The delivery each lease belongs to, to tell it from a later one. */
  readonly epochs: number[];
  readonly leaseDeadline: number;
  readonly written: Promise<void>;
}

/**
 * The broker's rules: the SQS message lifecycle over a Store. Every method
 * validates, changes the in-memory index, writes one atomic batch, and
 * answers once that batch is durable. Rules run on an injected clock, and
 * `runMaintenance` does on demand what the timers do.
 */
export class Broker {
  private readonly registry: QueueRegistry;
  private readonly handles: ReceiptHandles;
  private readonly waiting: WaitingReceives;
  private readonly leases = new LeaseTracking();
  private readonly openStreams = new Set<LeaseStream>();
  private readonly maintenance: Maintenance;
  private closed = false;

  private constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    stored: StoredState,
    onBackgroundError: (error: unknown) => void,
  ) {
    this.handles = new ReceiptHandles(stored.handleKey);
    this.waiting = new WaitingReceives(clock);
    this.registry = new QueueRegistry(store, clock, { onDeleted: (queue) => this.forgetQueue(queue) }, stored);
    this.maintenance = new Maintenance(
      clock,
      this.registry,
      this.waiting,
      (ops) => store.commit(ops),
      onBackgroundError,
      (queue, expired) => this.leases.expired(queue, expired),
      (queue, removed) => removed.forEach((message) => this.leases.untrack(queue, message.id)),
    );
  }

  /** Loads the store's state into memory and starts the timers. */
  static async open(options: BrokerOptions): Promise<Broker> {
    const stored = await options.store.load();
    const broker = new Broker(
      options.store,
      options.clock ?? systemClock,
      stored,
      options.onBackgroundError ?? (() => undefined),
    );
    broker.maintenance.start();
    return broker;
  }

  // ---- Queue admin -------------------------------------------------------

  async createQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    return this.describe(await this.registry.create(name, config));
  }

  getQueue(name: string): QueueInfo {
    return this.describe(this.registry.get(name, "name"));
  }

  listQueues(prefix = "", pageSize = 0, pageToken = ""): QueuePage {
    const page = this.registry.list(prefix, pageSize, pageToken);
    return { queues: page.queues.map((queue) => this.describe(queue)), nextPageToken: page.nextPageToken };
  }

  async updateQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    const queue = await this.registry.update(name, config);
    // A larger max_in_flight may make room for waiting receives.
    this.maintenance.advance(queue);
    return this.describe(queue);
  }

  async deleteQueue(name: string): Promise<void> {
    await this.registry.delete(name);
  }

  async purgeQueue(name: string): Promise<number> {
    const queue = this.registry.get(name, "name");
    const purged = await this.registry.purge(name);
    this.leases.forgetQueue(queue);
    this.maintenance.advance(queue);
    return purged;
  }

  // ---- Messages ----------------------------------------------------------

  /** Stores one message; returns its id. */
  async send(queueName: string, message: OutgoingMessage): Promise<string> {
    const [id] = await this.storeMessages(queueName, [message], "");
    return id!;
  }

  /** Stores 1 to 100 messages atomically; returns their ids in order. */
  async sendBatch(queueName: string, messages: readonly OutgoingMessage[]): Promise<string[]> {
    checkBatchSize(messages.length, "entries");
    return this.storeMessages(queueName, messages, "entries");
  }

  /** Leases up to maxMessages visible messages, waiting for them if asked to. */
  async receive(queueName: string, options: ReceiveOptions = {}): Promise<Delivery[]> {
    const queue = this.registry.get(queueName);
    const { maxMessages, visibilityTimeoutMs, waitTimeMs } = resolveReceiveOptions(options, queue.record.config);
    if (options.signal?.aborted) return [];
    this.maintenance.advance(queue);
    const take = (): Taken | undefined => this.take(queue, maxMessages, visibilityTimeoutMs);
    let taken = take();
    if (taken === undefined && waitTimeMs === 0 && this.atInFlightLimit(queue, visibilityTimeoutMs)) {
      throw new HoldshelfError(
        "TOO_MANY_IN_FLIGHT",
        `queue "${queueName}" has ${queue.inFlight} messages in flight, its max_in_flight`,
      );
    }
    if (taken === undefined && waitTimeMs > 0 && !this.closed) {
      taken = await this.waiting.wait(queue, take, waitTimeMs, options.signal);
    }
    if (taken === undefined) return [];
    return this.deliver(queue, taken, options.signal);
  }

  /** Deletes the message a receipt handle names; succeeds if it is already gone. */
  async delete(queueName: string, receiptHandle: string): Promise<void> {
    const queue = this.registry.get(queueName);
    const ops: StoreOp[] = [];
    this.deleteOne(queue, receiptHandle, ops);
    await this.commitAndServe(queue, ops);
  }

  /** Deletes several messages; one outcome per handle, in order. */
  async deleteBatch(queueName: string, receiptHandles: readonly string[]): Promise<EntryOutcome[]> {
    const queue = this.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => this.deleteOne(queue, receiptHandle, ops)),
    );
    await this.commitAndServe(queue, ops);
    return outcomes;
  }

  /** Sets a lease's deadline to now + timeout (0 releases the message); returns the new deadline. */
  async changeVisibility(queueName: string, receiptHandle: string, timeoutMs: number | undefined): Promise<number> {
    const queue = this.registry.get(queueName);
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const deadline = this.changeOne(queue, receiptHandle, timeout, ops);
    await this.commitAndServe(queue, ops);
    return deadline;
  }

  /** Changes several leases; one outcome per handle, in order. */
  async changeVisibilityBatch(
    queueName: string,
    receiptHandles: readonly string[],
    timeoutMs: number | undefined,
  ): Promise<EntryOutcome[]> {
    const queue = this.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({ leaseDeadline: this.changeOne(queue, receiptHandle, timeout, ops) })),
    );
    await this.commitAndServe(queue, ops);
    return outcomes;
  }

  // ---- Lease streams (Heartbeat) ----------------------------------------

  /** Opens a stream of lease renewals; the listener hears of its leases that expire. */
  openLeaseStream(listener: LeaseStreamListener): LeaseStream {
    const stream = new LeaseStream(listener);
    this.openStreams.add(stream);
    return stream;
  }

  /** How many lease streams are open. */
  get leaseStreamCount(): number {
    return this.openStreams.size;
  }

  /**
   * Renews leases as ChangeVisibility would (same fencing, same cap; an
   * unset timeout means the queue's), storing any checkpoints, in one durable
   * write. A renewal that fails says why in its state rather than throwing;
   * an unknown queue or too many renewals throws. Held leases are tracked on
   * the stream until deleted, released, expired, or the stream ends.
   */
  async renewLeases(stream: LeaseStream, queueName: string, renewals: readonly LeaseRenewal[]): Promise<LeaseState[]> {
    const queue = this.registry.get(queueName);
    checkRenewalCount(renewals.length);
    const ops: StoreOp[] = [];
    const states = renewals.map((renewal) => this.renewOne(stream, queue, renewal, ops));
    await this.commitAndServe(queue, ops);
    return states;
  }

  /**
   * Ends a stream. With `release`, every lease it still holds becomes visible
   * at once (the client went away mid-work); otherwise leases run their course.
   */
  async closeLeaseStream(stream: LeaseStream, release: boolean): Promise<void> {
    const held = [...stream.tracked.values()];
    this.openStreams.delete(stream);
    this.leases.forgetStream(stream);
    if (!release) return;
    const now = this.clock.now();
    const opsByQueue = new Map<QueueState, StoreOp[]>();
    for (const lease of held) {
      const message = lease.queue.messages.get(lease.messageId);
      if (message === undefined || message.epoch !== lease.epoch || !message.leased || lease.queue.deleted) continue;
      const fromReadyAt = message.readyAt;
      lease.queue.reschedule(message, now, false, now);
      const ops = opsByQueue.get(lease.queue) ?? [];
      ops.push(rescheduleOp(lease.queue.record.dataId, fromReadyAt, message));
      opsByQueue.set(lease.queue, ops);
    }
    await Promise.all([...opsByQueue].map(([queue, ops]) => this.commitAndServe(queue, ops)));
  }

  /** Does now everything that is due: expired leases and delays become visible, retention runs. */
  runMaintenance(): Promise<void> {
    return this.maintenance.runDue();
  }

  /**
   * Stops the timers, ends waiting receives empty-handed and asks lease
   * streams to end. The store stays open: its owner closes it.
   */
  close(): void {
    this.closed = true;
    this.maintenance.stop();
    this.waiting.releaseAll();
    for (const stream of [...this.openStreams]) stream.listener.brokerClosing();
  }

  // ---- Internals ---------------------------------------------------------

  /** A deleted queue's waiting receives fail, its timer stops, its leases are forgotten. */
  private forgetQueue(queue: QueueState): void {
    this.maintenance.disarm(queue);
    this.leases.forgetQueue(queue);
    this.waiting.failAll(queue, new HoldshelfError("QUEUE_NOT_FOUND", `queue "${queue.record.name}" was deleted`));
  }

  private describe(queue: QueueState): QueueInfo {
    this.maintenance.advance(queue);
    const { name, config, createTime } = queue.record;
    const counts = queue.counts();
    const oldestMessageAgeMs =
      counts.oldestSendTime === undefined ? undefined : Math.max(0, this.clock.now() - counts.oldestSendTime);
    return { name, config, createTime, counts, oldestMessageAgeMs };
  }

  private async storeMessages(queueName: string, messages: readonly OutgoingMessage[], batchField: string): Promise<string[]> {
    const queue = this.registry.get(queueName);
    const { config, dataId } = queue.record;
    const now = this.clock.now();
    const ops: StoreOp[] = [];
    let totalBytes = 0;
    messages.forEach((message, index) => {
      const field = batchField === "" ? "" : `${batchField}[${index}].`;
      const { size, delayMs } = checkOutgoing(message, config, field);
      totalBytes += size;
      const entry = {
        id: newMessageId(now),
        readyAt: now + delayMs,
        leased: false,
        receiveCount: 0,
        epoch: 0,
        sendTime: now,
        enqueuedAt: now,
        firstReceiveAt: 0,
        leaseStart: 0,
        size,
        hasCheckpoint: false,
      };
      ops.push({ kind: "putMessage", dataId, entry, content: { body: message.body, attributes: message.attributes ?? {} } });
    });
    if (totalBytes > maxSendBatchBytes) {
      throw new HoldshelfError("MESSAGE_TOO_LARGE", `the batch is ${totalBytes} bytes; at most ${maxSendBatchBytes}`, {
        violations: [{ field: batchField, description: `at most ${maxSendBatchBytes} bytes in all` }],
      });
    }
    await this.store.commit(ops);
    // Only now, durable, may the messages be seen. A purge or delete that
    // committed meanwhile removed them, as if they were sent just before it.
    if (!queue.deleted && queue.record.dataId === dataId) {
      const later = this.clock.now();
      for (const op of ops) if (op.kind === "putMessage") queue.add(op.entry, later);
      this.maintenance.advance(queue);
    }
    return ops.map((op) => (op.kind === "putMessage" ? formatMessageId(op.entry.id) : ""));
  }

  private atInFlightLimit(queue: QueueState, visibilityTimeoutMs: number): boolean {
    return visibilityTimeoutMs > 0 && queue.inFlight >= queue.record.config.maxInFlight;
  }

  /**
   * Leases visible messages in memory, oldest ready first, within the
   * in-flight limit and the response size budget. Synchronous, so concurrent
   * receives can never take the same message.
   */
  private take(queue: QueueState, maxMessages: number, visibilityTimeoutMs: number): Taken | undefined {
    if (queue.deleted || queue.visibleCount === 0) return undefined;
    let limit = maxMessages;
    if (visibilityTimeoutMs > 0) limit = Math.min(limit, queue.record.config.maxInFlight - queue.inFlight);
    if (limit <= 0) return undefined;
    const now = this.clock.now();
    const leaseDeadline = now + visibilityTimeoutMs;
    const messages: LiveMessage[] = [];
    let bytes = 0;
    while (messages.length < limit) {
      const next = queue.nextVisible();
      if (next === undefined) break;
      bytes += next.size + perMessageOverheadBytes;
      if (messages.length > 0 && bytes > receiveResponseBudgetBytes) break;
      queue.takeNextVisible();
      messages.push(next);
    }
    const { dataId } = queue.record;
    const ops: StoreOp[] = [];
    for (const message of messages) {
      const fromReadyAt = message.readyAt;
      message.receiveCount++;
      message.epoch++;
      if (message.firstReceiveAt === 0) message.firstReceiveAt = now;
      message.leaseStart = now;
      queue.reschedule(message, leaseDeadline, visibilityTimeoutMs > 0, now);
      ops.push(rescheduleOp(dataId, fromReadyAt, message));
    }
    // Written at once, so that the disk sees changes in the order memory did.
    const written = this.store.commit(ops);
    return { messages, epochs: messages.map((message) => message.epoch), leaseDeadline, written };
  }

  /** Makes a take durable, reads the bodies, and builds the deliveries. */
  private async deliver(queue: QueueState, taken: Taken, signal: AbortSignal | undefined): Promise<Delivery[]> {
    const { dataId, queueId } = queue.record;
    const [contents] = await Promise.all([this.store.readMessages(dataId, taken.messages), taken.written]);
    if (signal?.aborted) {
      await this.releaseTaken(queue, taken);
      return [];
    }
    const deliveries: Delivery[] = [];
    taken.messages.forEach((message, index) => {
      const content = contents[index];
      if (content === undefined) return; // purged while the lease was being written
      const epoch = taken.epochs[index]!;
      deliveries.push({
        messageId: formatMessageId(message.id),
        receiptHandle: this.handles.issue(queueId, message.id, epoch),
        body: content.body,
        attributes: content.attributes,
        receiveCount: message.receiveCount,
        sendTime: message.sendTime,
        firstReceiveTime: message.firstReceiveAt,
        leaseDeadline: taken.leaseDeadline,
        checkpoint: content.checkpoint,
      });
    });
    return deliveries;
  }

  /** Gives back the messages of a receive whose caller left before the answer: they become visible again. */
  private async releaseTaken(queue: QueueState, taken: Taken): Promise<void> {
    const now = this.clock.now();
    const ops: StoreOp[] = [];
    taken.messages.forEach((message, index) => {
      if (message.epoch !== taken.epochs[index] || !queue.messages.has(message.id)) return;
      const fromReadyAt = message.readyAt;
      queue.reschedule(message, now, false, now);
      ops.push(rescheduleOp(queue.record.dataId, fromReadyAt, message));
    });
    await this.commitAndServe(queue, ops);
  }

  private renewOne(stream: LeaseStream, queue: QueueState, renewal: LeaseRenewal, ops: StoreOp[]): LeaseState {
    const { receiptHandle, checkpoint } = renewal;
    try {
      const timeout = renewal.visibilityTimeoutMs ?? queue.record.config.visibilityTimeoutMs;
      checkVisibilityTimeout(timeout, queue.record.config);
      if (checkpoint !== undefined) checkCheckpoint(checkpoint);
      const { message, deadline } = this.changeLease(queue, receiptHandle, timeout, ops);
      if (checkpoint !== undefined) {
        message.hasCheckpoint = true;
        ops.push({ kind: "putCheckpoint", dataId: queue.record.dataId, id: message.id, checkpoint });
      }
      if (timeout === 0) return { receiptHandle, held: false, leaseDeadline: deadline, reason: "RELEASED" };
      this.leases.track({ stream, queue, messageId: message.id, epoch: message.epoch, receiptHandle });
      return { receiptHandle, held: true, leaseDeadline: deadline };
    } catch (error) {
      if (!(error instanceof HoldshelfError)) throw error;
      const lost = stream.tracked.get(receiptHandle);
      if (lost !== undefined) this.leases.untrack(lost.queue, lost.messageId);
      return { receiptHandle, held: false, reason: error.reason };
    }
  }

  private deleteOne(queue: QueueState, receiptHandle: string, ops: StoreOp[]): void {
    const message = findLeasedMessage(queue, this.handles, receiptHandle);
    if (message === undefined) return;
    queue.remove(message);
    this.leases.untrack(queue, message.id);
    ops.push(removeMessageOp(queue.record.dataId, message));
  }

  private changeOne(queue: QueueState, receiptHandle: string, timeoutMs: number, ops: StoreOp[]): number {
    return this.changeLease(queue, receiptHandle, timeoutMs, ops).deadline;
  }

  /** Sets a lease's deadline to now + timeout; 0 releases the message (and ends any stream's tracking of it). */
  private changeLease(
    queue: QueueState,
    receiptHandle: string,
    timeoutMs: number,
    ops: StoreOp[],
  ): { message: LiveMessage; deadline: number } {
    const message = findLeasedMessage(queue, this.handles, receiptHandle);
    if (message === undefined) {
      throw new HoldshelfError("MESSAGE_NOT_FOUND", "the message of this receipt handle no longer exists");
    }
    const now = this.clock.now();
    const deadline = now + timeoutMs;
    const limit = message.leaseStart + queue.record.config.maxLeaseDurationMs;
    if (deadline > limit) {
      throw new HoldshelfError(
        "LEASE_LIMIT_EXCEEDED",
        `the lease may not run past ${new Date(limit).toISOString()}, max_lease_duration after its receive`,
      );
    }
    const fromReadyAt = message.readyAt;
    queue.reschedule(message, deadline, timeoutMs > 0, now);
    if (timeoutMs === 0) this.leases.untrack(queue, message.id);
    ops.push(rescheduleOp(queue.record.dataId, fromReadyAt, message));
    return { message, deadline };
  }

  private requireTimeout(queue: QueueState, timeoutMs: number | undefined): number {
    if (timeoutMs === undefined) throw invalidArgument("visibility_timeout", "is required");
    checkVisibilityTimeout(timeoutMs, queue.record.config);
    return timeoutMs;
  }

  private async commitAndServe(queue: QueueState, ops: StoreOp[]): Promise<void> {
    if (ops.length === 0) return;
    const written = this.store.commit(ops);
    // Released messages and freed in-flight room go to waiting receives at
    // once; their writes queue behind this one, in the order memory changed.
    this.maintenance.advance(queue);
    await written;
  }
}

/** Runs one batch entry, turning a HoldshelfError into that entry's outcome. */
function outcomeOf(receiptHandle: string, run: () => void | { leaseDeadline: number }): EntryOutcome {
  try {
    const result = run();
    return result === undefined ? { receiptHandle } : { receiptHandle, leaseDeadline: result.leaseDeadline };
  } catch (error) {
    if (error instanceof HoldshelfError) return { receiptHandle, error };
    throw error;
  }
}
