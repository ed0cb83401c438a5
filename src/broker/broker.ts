import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import type { Store, StoredState, StoreOp } from "../store/store.js";
import { ignoredBrokerEvents, type BrokerEvents } from "./broker-events.js";
import { defaultBrokerLimits, StoredMessageBudget, type BrokerLimits } from "./broker-limits.js";
import { systemClock, type Clock } from "../time/clock.js";
import { BackgroundWork } from "./background-work.js";
import { DeadLetters } from "./dead-letters.js";
import { LeaseChanges } from "./lease-changes.js";
import { LeaseEndings } from "./lease-endings.js";
import { LeaseStream, LeaseTracking, type LeaseStreamListener } from "./lease-tracking.js";
import { Maintenance } from "./maintenance.js";
import { intakeMessages } from "./message-intake.js";
import { formatMessageId } from "./message-id.js";
import type { QueueConfigInput } from "./queue-config.js";
import { RevocableStore } from "./revocable-store.js";
import { QueueRegistry } from "./queue-registry.js";
import type { LiveMessage, QueueState } from "./queue-state.js";
import { ReceiptHandles } from "./receipt-handles.js";
import { checkBatchSize, checkRenewalCount, checkVisibilityTimeout, resolveReceiveOptions } from "./request-limits.js";
import { rescheduleOp } from "./store-ops.js";
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
import { takeVisible, type TakenMessages } from "./visible-taker.js";
import { WaitingReceives } from "./waiting-receives.js";

/** What a Broker is built on. */
export interface BrokerOptions {
  readonly store: Store;
  readonly clock?: Clock;
  /** Told of failures in background work (timers, cleanup), which have no caller to answer. */
  readonly onBackgroundError?: (error: unknown) => void;
  /** Told of messages and leases as they move, for metrics. */
  readonly events?: BrokerEvents;
  /** Capacity limits; unset ones take their defaults. */
  readonly limits?: Partial<BrokerLimits>;
}

/** Messages a receive has leased, and the pending write that makes the leases durable. */
interface Taken extends TakenMessages {
  readonly written: Promise<void>;
  /** Spent messages this answer delivers for the last time, to dead-letter once read. */
  readonly deadLetterAfter: LiveMessage[];
}

/**
 * The broker's rules: the SQS message lifecycle over a Store. Every method
 * validates, changes the in-memory index, writes one atomic batch, and
 * answers once that batch is durable. Rules run on an injected clock, and
 * `runMaintenance` does on demand what the timers do.
 */
export class Broker {
  // Not readonly: `reload` replaces the memory built from the store, part by part.
  private registry: QueueRegistry;
  private readonly handles: ReceiptHandles;
  private waiting: WaitingReceives;
  private leases = new LeaseTracking();
  private leaseChanges: LeaseChanges;
  private deadLetters: DeadLetters;
  private endings: LeaseEndings;
  private background: BackgroundWork;
  private readonly openStreams = new Set<LeaseStream>();
  private maintenance: Maintenance;
  private storedBudget: StoredMessageBudget;
  private closed = false;
  /** Set while storage fails: every call that needs it is refused with this, until `reload`. */
  private unavailable: HoldshelfError | undefined;

  private constructor(
    private store: RevocableStore,
    private readonly clock: Clock,
    stored: StoredState,
    private readonly onBackgroundError: (error: unknown) => void,
    private readonly events: BrokerEvents,
    private readonly limits: BrokerLimits,
  ) {
    this.handles = new ReceiptHandles(stored.handleKey);
    this.waiting = new WaitingReceives(clock, limits.maxWaitingReceives);
    this.registry = new QueueRegistry(
      store,
      clock,
      { onDeleted: (queue) => this.forgetQueue(queue) },
      stored,
      limits.maxQueues,
    );
    this.storedBudget = new StoredMessageBudget(limits.maxStoredMessages, () => this.registry.all());
    this.deadLetters = new DeadLetters(store, clock, this.registry, (queue) => this.maintenance.advance(queue), events);
    this.background = new BackgroundWork(onBackgroundError);
    this.endings = new LeaseEndings(clock, this.leases, this.deadLetters, this.background);
    this.leaseChanges = new LeaseChanges(clock, this.handles, this.leases, this.endings, events);
    this.maintenance = new Maintenance(
      clock,
      this.registry,
      this.waiting,
      (ops) => store.commit(ops),
      onBackgroundError,
      (queue, expired) => {
        // Expired messages keep their deadline as their ready time until their rules run.
        const now = clock.now();
        for (const message of expired) events.leaseExpired(queue.record.name, now - message.readyAt);
        this.leases.expired(queue, expired);
        const ops = this.endings.endAll(queue, expired, "expired");
        if (ops.length > 0) this.background.start(store.commit(ops));
      },
      (queue, removed) => {
        removed.forEach((message) => this.leases.untrack(queue, message.id));
        events.retentionExpired(queue.record.name, removed.length);
      },
    );
  }

  /** Loads the store's state into memory and starts the timers. */
  static async open(options: BrokerOptions): Promise<Broker> {
    const stored = await options.store.load();
    const broker = new Broker(
      new RevocableStore(options.store),
      options.clock ?? systemClock,
      stored,
      options.onBackgroundError ?? (() => undefined),
      options.events ?? ignoredBrokerEvents,
      { ...defaultBrokerLimits, ...options.limits },
    );
    broker.maintenance.start();
    return broker;
  }

  // ---- Queue admin -------------------------------------------------------

  /** Creates a queue, or returns the existing one if its configuration is the same. */
  async createQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    this.requireStorage();
    return this.describe(await this.registry.create(name, config));
  }

  /** A queue with its configuration and exact counts. */
  getQueue(name: string): QueueInfo {
    this.requireStorage();
    return this.describe(this.registry.get(name, "name"));
  }

  /** A page of queues in name order; with `visible`, only the queues it accepts. */
  listQueues(prefix = "", pageSize = 0, pageToken = "", visible?: (name: string) => boolean): QueuePage {
    this.requireStorage();
    const page = this.registry.list(prefix, pageSize, pageToken, visible);
    // One pass for the dead-letter sources of the whole page, not one per queue.
    const sources = this.registry.deadLetterSources();
    return { queues: page.queues.map((queue) => this.describe(queue, sources)), nextPageToken: page.nextPageToken };
  }

  /** Every queue, as `getQueue` describes it: what a metrics scrape reads. */
  allQueues(): QueueInfo[] {
    const sources = this.registry.deadLetterSources();
    return [...this.registry.all()].map((queue) => this.describe(queue, sources));
  }

  /** Replaces a queue's whole configuration; unset fields take their defaults. */
  async updateQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    this.requireStorage();
    const queue = await this.registry.update(name, config);
    // A larger max_in_flight may make room for waiting receives.
    this.maintenance.advance(queue);
    return this.describe(queue);
  }

  /** Deletes a queue and its messages, unless it is another queue's dead-letter queue. */
  async deleteQueue(name: string): Promise<void> {
    this.requireStorage();
    await this.registry.delete(name);
  }

  /** Removes every message of a queue; returns how many. */
  async purgeQueue(name: string): Promise<number> {
    this.requireStorage();
    const queue = this.registry.get(name, "name");
    const purged = await this.registry.purge(name);
    this.leases.forgetQueue(queue);
    this.maintenance.advance(queue);
    return purged;
  }

  // ---- Messages ----------------------------------------------------------

  /** Stores one message; returns its id. */
  async send(queueName: string, message: OutgoingMessage): Promise<string> {
    this.requireStorage();
    const [id] = await this.storeMessages(queueName, [message], "");
    return id!;
  }

  /** Stores 1 to 100 messages atomically; returns their ids in order. */
  async sendBatch(queueName: string, messages: readonly OutgoingMessage[]): Promise<string[]> {
    this.requireStorage();
    checkBatchSize(messages.length, "entries");
    return this.storeMessages(queueName, messages, "entries");
  }

  /** Leases up to maxMessages visible messages, waiting for them if asked to. */
  async receive(queueName: string, options: ReceiveOptions = {}): Promise<Delivery[]> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    const { maxMessages, visibilityTimeoutMs, waitTimeMs } = resolveReceiveOptions(options, queue.record.config);
    if (options.signal?.aborted) return [];
    this.maintenance.advance(queue);
    const take = (): Taken | undefined => this.takeForReceive(queue, maxMessages, visibilityTimeoutMs);
    let taken = take();
    const atInFlightLimit = visibilityTimeoutMs > 0 && queue.inFlight >= queue.record.config.maxInFlight;
    if (taken === undefined && waitTimeMs === 0 && atInFlightLimit) {
      throw new HoldshelfError(
        "TOO_MANY_IN_FLIGHT",
        `queue "${queueName}" has ${queue.inFlight} messages in flight, its max_in_flight`,
      );
    }
    if (taken === undefined && waitTimeMs > 0 && !this.closed) {
      taken = await this.waiting.wait(queue, take, waitTimeMs, options.signal);
    }
    if (taken === undefined) {
      if (!options.signal?.aborted) this.events.emptyReceive(queueName);
      return [];
    }
    return this.deliver(queue, taken, options.signal);
  }

  /** Deletes the message a receipt handle names; succeeds if it is already gone. */
  async delete(queueName: string, receiptHandle: string): Promise<void> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    const ops: StoreOp[] = [];
    this.leaseChanges.delete(queue, receiptHandle, ops);
    await this.commitAndServe(queue, ops);
  }

  /** Deletes several messages; one outcome per handle, in order. */
  async deleteBatch(queueName: string, receiptHandles: readonly string[]): Promise<EntryOutcome[]> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => this.leaseChanges.delete(queue, receiptHandle, ops)),
    );
    await this.commitAndServe(queue, ops);
    return outcomes;
  }

  /** Sets a lease's deadline to now + timeout (0 releases the message); returns the new deadline. */
  async changeVisibility(queueName: string, receiptHandle: string, timeoutMs: number | undefined): Promise<number> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const { deadline } = this.leaseChanges.change(queue, receiptHandle, timeout, ops, "change_visibility");
    await this.commitAndServe(queue, ops);
    return deadline;
  }

  /** Changes several leases; one outcome per handle, in order. */
  async changeVisibilityBatch(
    queueName: string,
    receiptHandles: readonly string[],
    timeoutMs: number | undefined,
  ): Promise<EntryOutcome[]> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({
        leaseDeadline: this.leaseChanges.change(queue, receiptHandle, timeout, ops, "change_visibility").deadline,
      })),
    );
    await this.commitAndServe(queue, ops);
    return outcomes;
  }

  /**
   * Moves visible messages out of a dead-letter queue, oldest first, to a
   * destination queue or back to each one's source queue; `maxMessages` 0
   * means all, `maxPerSecond` 0 no limit. Returns how many moved.
   */
  async redriveMessages(
    deadLetterQueueName: string,
    destinationName: string,
    maxMessages: number,
    maxPerSecond: number,
    signal?: AbortSignal,
  ): Promise<number> {
    this.requireStorage();
    const deadLetterQueue = this.registry.get(deadLetterQueueName, "dead_letter_queue");
    const destination = destinationName === "" ? undefined : this.registry.get(destinationName, "destination_queue");
    if (destination === deadLetterQueue) {
      throw invalidArgument("destination_queue", "must be another queue than the dead-letter queue");
    }
    if (!Number.isSafeInteger(maxMessages) || maxMessages < 0) {
      throw invalidArgument("max_messages", `must be 0 (all) to ${Number.MAX_SAFE_INTEGER}`);
    }
    if (!Number.isInteger(maxPerSecond) || maxPerSecond < 0) throw invalidArgument("max_per_second", "must not be negative");
    this.maintenance.advance(deadLetterQueue);
    return this.deadLetters.redrive(deadLetterQueue, destination, maxMessages || Infinity, maxPerSecond, signal);
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

  /** How many long-poll Receives are waiting, over all queues. */
  get waitingReceiveCount(): number {
    return this.waiting.size;
  }

  /**
   * Renews leases as ChangeVisibility would (same fencing, same cap; an
   * unset timeout means the queue's), storing any checkpoints, in one durable
   * write. A renewal that fails says why in its state rather than throwing;
   * an unknown queue or too many renewals throws. Held leases are tracked on
   * the stream until deleted, released, expired, or the stream ends.
   */
  async renewLeases(stream: LeaseStream, queueName: string, renewals: readonly LeaseRenewal[]): Promise<LeaseState[]> {
    this.requireStorage();
    const queue = this.registry.get(queueName);
    checkRenewalCount(renewals.length);
    const ops: StoreOp[] = [];
    const states = renewals.map((renewal) => this.leaseChanges.renew(stream, queue, renewal, ops));
    await this.commitAndServe(queue, ops);
    return states;
  }

  /**
   * Ends a stream. With `release`, every lease it still holds becomes visible
   * at once (the client went away mid-work); otherwise leases run their course.
   * Returns how many leases it held.
   */
  async closeLeaseStream(stream: LeaseStream, release: boolean): Promise<number> {
    const held = [...stream.tracked.values()];
    this.openStreams.delete(stream);
    this.leases.forgetStream(stream);
    // Without storage nothing can be released; the reload puts every lease back as the disk holds it.
    if (release && this.unavailable === undefined) {
      const writes = this.leaseChanges.release(held);
      await Promise.all([...writes].map(([queue, ops]) => this.commitAndServe(queue, ops)));
    }
    return held.length;
  }

  /** Does now everything that is due: expired leases and delays become visible, retention runs. */
  async runMaintenance(): Promise<void> {
    await this.maintenance.runDue();
    await this.background.settled();
  }

  /** Resolves once background work (dead-letter moves, writes after expiries) has finished. */
  settled(): Promise<void> {
    return this.background.settled();
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

  // ---- Storage failures --------------------------------------------------

  /**
   * Storage failed: until `reload`, every call that needs it is refused with
   * `error`; waiting receives and lease streams end with it, the timers stop,
   * and work still running can no longer write (its memory is about to be
   * rebuilt from disk, where its changes may never have landed).
   */
  suspend(error: HoldshelfError): void {
    if (this.unavailable !== undefined) return;
    this.unavailable = error;
    this.store.revoke(error);
    this.maintenance.stop();
    for (const queue of this.registry.all()) this.waiting.failAll(queue, error);
    for (const stream of [...this.openStreams]) stream.listener.storageUnavailable?.(error);
  }

  /** Whether storage failed and the broker waits for `reload`. */
  get suspended(): boolean {
    return this.unavailable !== undefined;
  }

  /**
   * Storage works again: rebuilds the memory from `stored` (what the reopened
   * store holds, so changes that were never written are gone) and serves.
   */
  reload(stored: StoredState): void {
    // A fresh broker builds the memory; its parts call back into it alone, and
    // this broker (the one the server and callers hold) takes them over. The
    // first memory's callbacks name this broker, so would reach the new parts,
    // but they run only from its timers or after its writes succeed, and
    // `suspend` stopped the one and revoked the other.
    const fresh = new Broker(this.store.renewed(), this.clock, stored, this.onBackgroundError, this.events, this.limits);
    this.store = fresh.store;
    this.registry = fresh.registry;
    this.waiting = fresh.waiting;
    this.leases = fresh.leases;
    this.leaseChanges = fresh.leaseChanges;
    this.deadLetters = fresh.deadLetters;
    this.endings = fresh.endings;
    this.background = fresh.background;
    this.maintenance = fresh.maintenance;
    this.storedBudget = fresh.storedBudget;
    this.unavailable = undefined;
    // A broker closed meanwhile (a shutdown during the outage) arms no timers,
    // not even from a scrape's describe(): nothing would cancel them.
    if (this.closed) this.maintenance.stop();
    else this.maintenance.start();
  }

  // ---- Internals ---------------------------------------------------------

  private requireStorage(): void {
    if (this.unavailable !== undefined) throw this.unavailable;
  }

  /** A deleted queue's waiting receives fail, its timer stops, its leases are forgotten. */
  private forgetQueue(queue: QueueState): void {
    this.maintenance.disarm(queue);
    this.leases.forgetQueue(queue);
    this.waiting.failAll(queue, new HoldshelfError("QUEUE_NOT_FOUND", `queue "${queue.record.name}" was deleted`));
  }

  private describe(queue: QueueState, sources = this.registry.deadLetterSources()): QueueInfo {
    this.maintenance.advance(queue);
    const { name, config, createTime } = queue.record;
    const counts = queue.counts();
    const oldestMessageAgeMs =
      counts.oldestSendTime === undefined ? undefined : Math.max(0, this.clock.now() - counts.oldestSendTime);
    const deadLetterSourceQueues = sources.get(name) ?? [];
    return { name, config, createTime, counts, oldestMessageAgeMs, deadLetterSourceQueues };
  }

  private async storeMessages(queueName: string, messages: readonly OutgoingMessage[], batchField: string): Promise<string[]> {
    const queue = this.registry.get(queueName);
    const dataId = queue.record.dataId;
    const ops = intakeMessages(queue, messages, batchField, this.clock.now());
    const release = this.storedBudget.reserve(ops.length);
    try {
      await this.store.commit(ops);
    } finally {
      // Adopted below in the same turn, so the queue counts them from here on.
      release();
    }
    this.events.sent(queueName, ops.length);
    // Only now, durable, may the messages be seen. A purge or delete that
    // committed meanwhile removed them, as if they were sent just before it.
    if (!queue.deleted && queue.record.dataId === dataId) {
      const now = this.clock.now();
      // The entries were made for this send alone: adopt them rather than copy.
      for (const op of ops) queue.adopt(op.entry, now);
      this.maintenance.advance(queue);
    }
    return ops.map((op) => formatMessageId(op.entry.id));
  }

  /** Leases visible messages for a receive and starts the write that makes the leases durable. */
  private takeForReceive(queue: QueueState, maxMessages: number, visibilityTimeoutMs: number): Taken | undefined {
    const taken = takeVisible(queue, maxMessages, visibilityTimeoutMs, this.clock.now());
    if (taken === undefined) return undefined;
    if (taken.spent.length > 0) this.endings.endAll(queue, taken.spent, "released");
    if (taken.messages.length === 0) return undefined;
    // Written at once, so that the disk sees changes in the order memory did.
    const written = this.store.commit(taken.ops);
    // A receive that hides nothing ends its leases at once: messages on their
    // last allowed delivery leave for the dead-letter queue, but only once
    // this answer has read their bodies. Until then nobody else sees them.
    const deadLetterAfter =
      visibilityTimeoutMs === 0 ? taken.messages.filter((message) => DeadLetters.isSpent(queue, message)) : [];
    for (const message of deadLetterAfter) {
      queue.remove(message);
      this.leases.untrack(queue, message.id);
    }
    return { ...taken, written, deadLetterAfter };
  }

  /** Makes a take durable, reads the bodies, and builds the deliveries. */
  private async deliver(queue: QueueState, taken: Taken, signal: AbortSignal | undefined): Promise<Delivery[]> {
    const { dataId, queueId } = queue.record;
    // Read only once the lease is written: batches land in call order, so a
    // checkpoint saved with the release that freed a message is on disk by then.
    await taken.written;
    const contents = await this.store.readMessages(dataId, taken.messages);
    if (taken.deadLetterAfter.length > 0) this.background.start(this.deadLetters.deadLetter(queue, taken.deadLetterAfter));
    if (signal?.aborted) {
      await this.releaseTaken(queue, taken);
      return [];
    }
    const deliveries: Delivery[] = [];
    taken.messages.forEach((message, index) => {
      const content = contents[index];
      if (content === undefined) return; // purged while the lease was being written
      const epoch = taken.epochs[index]!;
      const queueWaitMs = message.receiveCount === 1 ? taken.takenAt - taken.readyTimes[index]! : undefined;
      this.events.delivered(queue.record.name, message.receiveCount, queueWaitMs);
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
        deadLetter: content.deadLetter,
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
      // Nobody saw this delivery: it does not count toward max_receive_count.
      message.receiveCount--;
      if (message.receiveCount === 0) message.firstReceiveAt = 0;
      queue.reschedule(message, now, false, now);
      ops.push(rescheduleOp(queue.record.dataId, fromReadyAt, message));
    });
    await this.commitAndServe(queue, ops);
  }

  private requireTimeout(queue: QueueState, timeoutMs: number | undefined): number {
    if (timeoutMs === undefined) throw invalidArgument("visibility_timeout", "is required");
    checkVisibilityTimeout(timeoutMs, queue.record.config);
    return timeoutMs;
  }

  private async commitAndServe(queue: QueueState, ops: StoreOp[]): Promise<void> {
    // Nothing to write (say, a retried Delete of a message already gone from
    // memory) still waits for the batches before it: the removal it reports
    // may be one of them, and must not be answered OK before it is durable.
    const written = this.store.commit(ops);
    if (ops.length === 0) return written;
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
