import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import type { Store, StoredQueue, StoredState, StoreOp } from "../store/store.js";
import { systemClock, type Clock } from "../time/clock.js";
import { ignoredBrokerEvents, type BrokerEvents } from "./broker-events.js";
import { noneElsewhere, type Arrival, type ClusterQueues } from "../store/cluster-queues.js";
import { defaultBrokerLimits, type BrokerLimits } from "./broker-limits.js";
import { createBrokerMemory, type BrokerMemory, type BrokerMemoryOptions } from "./broker-memory.js";
import { LeaseStream, type LeaseStreamListener } from "./lease-tracking.js";
import type { MoveTarget } from "./dead-letters.js";
import { intakeMessages } from "./message-intake.js";
import { fifoSends, standardSends } from "./send-plans.js";
import { peekMessages } from "./message-peek.js";
import { keptMoveTasks, maxMoveTaskRate, moveTaskNotFound } from "./move-tasks.js";
import { parseMoveTaskHandle } from "../protocol/move-task-handle.js";
import type { QueueConfigInput } from "./queue-config.js";
import type { QueueState } from "./queue-state.js";
import { checkBatchSize, checkRenewalCount, checkVisibilityTimeout, resolveReceiveOptions } from "./request-limits.js";
import { defaultRenewalLinger, renewalLingerMs, type RenewalLinger } from "./renewal-linger.js";
import { RevocableStore } from "./revocable-store.js";
import type {
  Delivery,
  EntryOutcome,
  LeaseRenewal,
  LeaseState,
  MoveTaskInfo,
  OutgoingMessage,
  PeekPage,
  QueueInfo,
  QueuePage,
  ReceiveOptions,
  SendResult,
} from "./types.js";

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
  /** When Heartbeat renewals' writes wait for company; defaultRenewalLinger if unset. */
  readonly renewalLinger?: RenewalLinger;
  /** Cluster mode: the queues other brokers serve, for moves and checks across shards; none if unset. */
  readonly cluster?: ClusterQueues;
}

/**
 * The broker: the SQS message lifecycle over a Store, as a thin facade. Each
 * method validates, hands the change to the rules in its memory (see
 * BrokerMemory), commits what they changed, and answers once that is
 * durable: in one atomic batch, unless its doc says otherwise
 * (closeLeaseStream, redriveMessages, message move tasks). Rules run on an injected clock, and
 * `runMaintenance` does on demand what the timers do.
 */
export class Broker {
  private closed = false;
  /** Set while storage fails: every call that needs it is refused with this, until `reload`. */
  private unavailable: HoldshelfError | undefined;
  // Connections, not state loaded from the store: they outlive a reload (and are told of the outage).
  private readonly openStreams = new Set<LeaseStream>();

  private constructor(
    // Replaced whole by `reload`.
    private memory: BrokerMemory,
    private readonly settings: Omit<BrokerMemoryOptions, "store" | "stored">,
    private readonly renewalLinger: RenewalLinger,
  ) {}

  /** Loads the store's state into memory and starts the timers. */
  static async open(options: BrokerOptions): Promise<Broker> {
    const stored = await options.store.load();
    const settings = {
      clock: options.clock ?? systemClock,
      onBackgroundError: options.onBackgroundError ?? (() => undefined),
      events: options.events ?? ignoredBrokerEvents,
      limits: { ...defaultBrokerLimits, ...options.limits },
      cluster: options.cluster ?? noneElsewhere,
    };
    const memory = createBrokerMemory({ ...settings, store: new RevocableStore(options.store), stored });
    const broker = new Broker(memory, settings, options.renewalLinger ?? defaultRenewalLinger);
    broker.memory.maintenance.start();
    broker.memory.moveTasks.resume(broker.memory.registry.all());
    return broker;
  }

  // ---- Queue admin -------------------------------------------------------

  /** Creates a queue, or returns the existing one if its configuration is the same. */
  async createQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    this.requireStorage();
    return this.describe(await this.memory.registry.create(name, config));
  }

  /** A queue with its configuration and exact counts (in cluster mode, its dead-letter sources on other brokers as last read). */
  getQueue(name: string): QueueInfo {
    this.requireStorage();
    return this.describe(this.memory.registry.get(name, "name"));
  }

  /**
   * Reads again which queues on other brokers name each dead-letter queue
   * (cluster mode), so that the getQueue and listQueues that follow are
   * exact; without it they say it as last read, at most a second ago.
   */
  async refreshDeadLetterSources(): Promise<void> {
    await this.settings.cluster.refresh();
  }

  /** A page of queues in name order; with `visible`, only the queues it accepts. */
  listQueues(prefix = "", pageSize = 0, pageToken = "", visible?: (name: string) => boolean): QueuePage {
    this.requireStorage();
    const page = this.memory.registry.list(prefix, pageSize, pageToken, visible);
    // One pass for the dead-letter sources of the whole page, not one per queue.
    const sources = this.deadLetterSources();
    return { queues: page.queues.map((queue) => this.describe(queue, sources)), nextPageToken: page.nextPageToken };
  }

  /** Every queue, as `getQueue` describes it: what a metrics scrape reads. */
  allQueues(): QueueInfo[] {
    const sources = this.deadLetterSources();
    return [...this.memory.registry.all()].map((queue) => this.describe(queue, sources));
  }

  /** Replaces a queue's whole configuration; unset fields take their defaults. */
  async updateQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    this.requireStorage();
    const queue = await this.memory.registry.update(name, config);
    // A larger max_in_flight may make room for waiting receives.
    this.memory.maintenance.advance(queue);
    return this.describe(queue);
  }

  /** Deletes a queue and its messages, unless it is another queue's dead-letter queue. */
  async deleteQueue(name: string): Promise<void> {
    this.requireStorage();
    await this.memory.registry.delete(name);
  }

  /** Removes every message of a queue; returns how many. */
  async purgeQueue(name: string): Promise<number> {
    this.requireStorage();
    const queue = this.memory.registry.get(name, "name");
    const purged = await this.memory.registry.purge(name);
    this.memory.leases.forgetQueue(queue);
    this.memory.maintenance.advance(queue);
    return purged;
  }

  // ---- Messages ----------------------------------------------------------

  /** Stores one message; returns its id (a FIFO queue's duplicate: the first send's). */
  async send(queueName: string, message: OutgoingMessage): Promise<string> {
    return (await this.sendWithResult(queueName, message)).messageId;
  }

  /** Stores one message; returns its id and, in a FIFO queue, its sequence number. */
  async sendWithResult(queueName: string, message: OutgoingMessage): Promise<SendResult> {
    this.requireStorage();
    const [result] = await this.storeMessages(queueName, [message], "");
    return result!;
  }

  /** Stores 1 to 100 messages atomically; returns their ids in order. */
  async sendBatch(queueName: string, messages: readonly OutgoingMessage[]): Promise<string[]> {
    return (await this.sendBatchWithResults(queueName, messages)).map((result) => result.messageId);
  }

  /** Stores 1 to 100 messages atomically (a FIFO queue's duplicates aside); returns their ids and sequence numbers in order. */
  async sendBatchWithResults(queueName: string, messages: readonly OutgoingMessage[]): Promise<SendResult[]> {
    this.requireStorage();
    checkBatchSize(messages.length, "entries");
    return this.storeMessages(queueName, messages, "entries");
  }

  /** Leases up to maxMessages visible messages, waiting for them if asked to. */
  async receive(queueName: string, options: ReceiveOptions = {}): Promise<Delivery[]> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    const resolved = resolveReceiveOptions(options, queue.record.config);
    if (options.signal?.aborted) return [];
    return this.memory.receiving.receive(queue, { ...resolved, mayWait: !this.closed }, options.signal);
  }

  /** Deletes the message a receipt handle names; succeeds if it is already gone. */
  async delete(queueName: string, receiptHandle: string): Promise<void> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    const ops: StoreOp[] = [];
    this.memory.leaseChanges.delete(queue, receiptHandle, ops);
    await this.memory.commitAndServe(queue, ops);
  }

  /** Deletes several messages; one outcome per handle, in order. */
  async deleteBatch(queueName: string, receiptHandles: readonly string[]): Promise<EntryOutcome[]> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => this.memory.leaseChanges.delete(queue, receiptHandle, ops)),
    );
    await this.memory.commitAndServe(queue, ops);
    return outcomes;
  }

  /** Sets a lease's deadline to now + timeout (0 releases the message); returns the new deadline. */
  async changeVisibility(queueName: string, receiptHandle: string, timeoutMs: number | undefined): Promise<number> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const { deadline } = this.memory.leaseChanges.change(queue, receiptHandle, timeout, ops, "change_visibility");
    await this.memory.commitAndServe(queue, ops);
    return deadline;
  }

  /** Changes several leases; one outcome per handle, in order. */
  async changeVisibilityBatch(
    queueName: string,
    receiptHandles: readonly string[],
    timeoutMs: number | undefined,
  ): Promise<EntryOutcome[]> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    checkBatchSize(receiptHandles.length, "receipt_handles");
    const timeout = this.requireTimeout(queue, timeoutMs);
    const ops: StoreOp[] = [];
    const outcomes = receiptHandles.map((receiptHandle) =>
      outcomeOf(receiptHandle, () => ({
        leaseDeadline: this.memory.leaseChanges.change(queue, receiptHandle, timeout, ops, "change_visibility").deadline,
      })),
    );
    await this.memory.commitAndServe(queue, ops);
    return outcomes;
  }

  /**
   * A page of a queue's messages, oldest first (by arrival), with their
   * states, read without changing anything: see message-peek.ts. `pageSize`
   * 0 means 10; `pageToken` is the previous page's nextPageToken.
   */
  async peekMessages(queueName: string, pageSize = 0, pageToken = ""): Promise<PeekPage> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    return peekMessages(queue, this.memory.store, this.settings.clock.now(), pageSize, pageToken);
  }

  /**
   * Moves visible messages out of a dead-letter queue, oldest first, to a
   * destination queue or back to each one's source queue; `maxMessages` 0
   * means all, `maxPerSecond` 0 no limit. Each move of up to 100 messages is
   * its own atomic batch. Returns how many moved.
   */
  async redriveMessages(
    deadLetterQueueName: string,
    destinationName: string,
    maxMessages: number,
    maxPerSecond: number,
    signal?: AbortSignal,
  ): Promise<number> {
    this.requireStorage();
    const deadLetterQueue = this.memory.registry.get(deadLetterQueueName, "dead_letter_queue");
    const destination = destinationName === "" ? undefined : await this.moveTarget(destinationName, "destination_queue", deadLetterQueue);
    if (destination === deadLetterQueue) {
      throw invalidArgument("destination_queue", "must be another queue than the dead-letter queue");
    }
    if (!Number.isSafeInteger(maxMessages) || maxMessages < 0) {
      throw invalidArgument("max_messages", `must be 0 (all) to ${Number.MAX_SAFE_INTEGER}`);
    }
    if (!Number.isInteger(maxPerSecond) || maxPerSecond < 0) throw invalidArgument("max_per_second", "must not be negative");
    this.memory.maintenance.advance(deadLetterQueue);
    return this.memory.deadLetters.redrive(deadLetterQueue, destination, maxMessages || Infinity, maxPerSecond, signal);
  }

  // ---- Message move tasks ------------------------------------------------

  /**
   * Starts a message move task: redriveMessages in the background, for
   * every message visible in the source queue now (see MoveTasks), at most
   * `maxPerSecond` a second (0 to 500; 0: no limit). Answers once the task
   * is stored, with its handle.
   */
  async startMessageMoveTask(sourceName: string, destinationName: string, maxPerSecond: number): Promise<string> {
    this.requireStorage();
    const source = this.memory.registry.get(sourceName, "source_queue");
    const destination = destinationName === "" ? undefined : await this.moveTarget(destinationName, "destination_queue", source);
    if (destination === source) throw invalidArgument("destination_queue", "must be another queue than the source queue");
    if (!Number.isInteger(maxPerSecond) || maxPerSecond < 0 || maxPerSecond > maxMoveTaskRate) {
      throw invalidArgument("max_per_second", `must be 0 (no limit) to ${maxMoveTaskRate}`);
    }
    this.memory.maintenance.advance(source);
    return this.memory.moveTasks.start(source, destinationName, maxPerSecond);
  }

  /** A source queue's last message move tasks, newest first: `maxResults` 1 to 10, 0 meaning 1 (as SQS). */
  listMessageMoveTasks(sourceName: string, maxResults: number): MoveTaskInfo[] {
    this.requireStorage();
    const source = this.memory.registry.get(sourceName, "source_queue");
    if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > keptMoveTasks) {
      throw invalidArgument("max_results", `must be 0 (1) to ${keptMoveTasks}`);
    }
    return this.memory.moveTasks.list(source, maxResults || 1);
  }

  /**
   * Cancels a running message move task once its current batch is moved;
   * returns how many messages it moved. MOVE_TASK_NOT_FOUND unless the
   * handle's task is running.
   */
  async cancelMessageMoveTask(taskHandle: string): Promise<number> {
    this.requireStorage();
    const handle = parseMoveTaskHandle(taskHandle);
    if (handle === undefined) throw invalidArgument("task_handle", "is not a handle StartMessageMoveTask returned");
    let source: QueueState;
    try {
      source = this.memory.registry.get(handle.sourceQueue, "task_handle");
    } catch (error) {
      // A deleted source queue took its tasks along; a queue moving away (cluster mode) answers as the registry does.
      if (error instanceof HoldshelfError && error.reason === "QUEUE_NOT_FOUND") throw moveTaskNotFound();
      throw error;
    }
    return this.memory.moveTasks.cancel(source, handle.taskId);
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
    return this.memory.waiting.size;
  }

  /**
   * Renews leases as ChangeVisibility would (same fencing, same cap; an
   * unset timeout means the queue's), storing any checkpoints, in one durable
   * write. A renewal that fails says why in its state rather than throwing;
   * an unknown queue or too many renewals throws. Held leases are tracked on
   * the stream until deleted, released, expired, or the stream ends.
   *
   * The write may linger to share an fsync (renewal-linger.ts). A stream
   * answers in order, so requests behind a lingering one would wait out one
   * linger each: `moreQueued` says some are already waiting (no linger), and
   * a stream whose next request arrives meanwhile calls hurryRenewals.
   */
  async renewLeases(
    stream: LeaseStream,
    queueName: string,
    renewals: readonly LeaseRenewal[],
    moreQueued = false,
  ): Promise<LeaseState[]> {
    this.requireStorage();
    const queue = this.memory.registry.get(queueName);
    checkRenewalCount(renewals.length);
    const ops: StoreOp[] = [];
    const states = renewals.map((renewal) => this.memory.leaseChanges.renew(stream, queue, renewal, ops));
    await this.memory.commitAndServe(queue, ops, renewalLingerMs(this.renewalLinger, this.openStreams.size, moreQueued));
    return states;
  }

  /** Starts lingering renewal writes at once: a barrier never lingers, and takes them along. */
  hurryRenewals(): void {
    // The renewals' own commits report any failure.
    this.memory.store.commit([]).catch(() => undefined);
  }

  /**
   * Ends a stream. With `release`, every lease it still holds becomes visible
   * at once (the client went away mid-work); otherwise leases run their course.
   * The releases are written in one batch per queue, all at once. Returns how
   * many leases it held.
   */
  async closeLeaseStream(stream: LeaseStream, release: boolean): Promise<number> {
    const held = [...stream.tracked.values()];
    this.openStreams.delete(stream);
    this.memory.leases.forgetStream(stream);
    // Without storage nothing can be released; the reload puts every lease back as the disk holds it.
    if (release && this.unavailable === undefined) {
      const writes = this.memory.leaseChanges.release(held);
      await Promise.all([...writes].map(([queue, ops]) => this.memory.commitAndServe(queue, ops)));
    }
    return held.length;
  }

  /** Does now everything that is due: expired leases and delays become visible, retention runs. */
  async runMaintenance(): Promise<void> {
    await this.memory.maintenance.runDue();
    await this.memory.background.settled();
  }

  /**
   * Resolves once background work (dead-letter moves, writes after expiries,
   * message move tasks) has finished. A running task finishes only when it
   * ends or is stopped (close): a paced one waits for the clock.
   */
  async settled(): Promise<void> {
    await this.memory.moveTasks.settled();
    await this.memory.background.settled();
  }

  /**
   * Stops the timers, ends waiting receives empty-handed and asks lease
   * streams to end. The store stays open: its owner closes it.
   */
  close(): void {
    this.closed = true;
    this.memory.maintenance.stop();
    // Stored as running: they resume when a broker opens on the store again; none starts after this.
    this.memory.moveTasks.close(new HoldshelfError("SHUTTING_DOWN", "the broker is shutting down; the task resumes when it starts again"));
    this.memory.waiting.releaseAll();
    for (const stream of [...this.openStreams]) stream.listener.brokerClosing();
  }

  // ---- Queues moving between brokers (cluster mode) ---------------------

  /** Serves queues loaded from shards this broker just gained. */
  adoptQueues(queues: readonly StoredQueue[]): void {
    const adopted = this.memory.registry.adopt(queues);
    for (const queue of adopted) this.memory.maintenance.advance(queue);
    this.memory.moveTasks.resume(adopted);
  }

  /**
   * Shows messages that other brokers moved into queues this broker serves
   * (cluster mode: dead-letter moves and redrives across shards), already in
   * the store. One whose queue was purged or deleted meanwhile, or that is
   * here already, is left alone.
   */
  takeArrivals(arrivals: readonly Arrival[]): void {
    const now = this.settings.clock.now();
    const touched = new Set<QueueState>();
    const renumbered: StoreOp[] = [];
    for (const { queue: name, dataId, entry } of arrivals) {
      const queue = this.memory.registry.find(name);
      if (queue === undefined || queue.record.dataId !== dataId || queue.get(entry.id) !== undefined) continue;
      // A FIFO message numbered by the sending broker's clock (crossShardSequence)
      // may number below messages already here: it arrives last, so it is
      // renumbered after them, here and on disk, rather than slotted in ahead.
      let arrival = entry;
      if (queue.fifo && entry.group !== undefined && (entry.sequence ?? 0) <= queue.lastSequenceNumber) {
        arrival = { ...entry, sequence: queue.nextSequence(now) };
        renumbered.push({ kind: "reschedule", dataId, fromReadyAt: entry.readyAt, entry: arrival });
      }
      queue.add(arrival, now);
      touched.add(queue);
    }
    if (renumbered.length > 0) this.memory.background.start(this.memory.store.commit(renumbered));
    for (const queue of touched) this.memory.maintenance.advance(queue);
  }

  /**
   * Stops serving queues whose shards go to another broker: calls on them
   * fail with `error` (and their waiting receives end with it), their timers
   * stop and their leases are forgotten here. Heartbeat streams that renew
   * them reach the new owner through forwarding.
   */
  evictQueues(names: readonly string[], error: HoldshelfError): void {
    for (const queue of this.memory.registry.evict(names, error)) {
      this.memory.maintenance.disarm(queue);
      // Left stored as running, for the queue's next owner to resume.
      this.memory.moveTasks.stop(error, [queue]);
      this.memory.leases.forgetQueue(queue);
      this.memory.waiting.failAll(queue, error);
    }
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
    this.memory.store.revoke(error);
    this.memory.maintenance.stop();
    // The reload resumes them from what the disk holds.
    this.memory.moveTasks.stop(error);
    for (const queue of this.memory.registry.all()) this.memory.waiting.failAll(queue, error);
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
    // The old memory's parts call back into it alone, and `suspend` stopped
    // its timers and revoked its store: nothing of it can reach the new one.
    this.memory = createBrokerMemory({ ...this.settings, store: this.memory.store.renewed(), stored });
    this.unavailable = undefined;
    // A broker closed meanwhile (a shutdown during the outage) arms no timers,
    // not even from a scrape's describe(): nothing would cancel them.
    if (this.closed) {
      this.memory.maintenance.stop();
    } else {
      this.memory.maintenance.start();
      this.memory.moveTasks.resume(this.memory.registry.all());
    }
  }

  // ---- Internals ---------------------------------------------------------

  private requireStorage(): void {
    if (this.unavailable !== undefined) throw this.unavailable;
  }

  /** Advances the queue first, so that counts are exact: see Maintenance.advance for why a read may write. */
  /** Each dead-letter queue's sources: this broker's queues, and (cluster mode) the others' as last read. */
  private deadLetterSources(): Map<string, string[]> {
    const sources = this.memory.registry.deadLetterSources();
    for (const [target, elsewhere] of this.settings.cluster.knownDeadLetterSourcesElsewhere()) {
      sources.set(target, [...(sources.get(target) ?? []), ...elsewhere].sort());
    }
    return sources;
  }

  private describe(queue: QueueState, sources = this.deadLetterSources()): QueueInfo {
    this.memory.maintenance.advance(queue);
    const { name, config, createTime, updateTime } = queue.record;
    const counts = queue.counts();
    const oldestMessageAgeMs =
      counts.oldestSendTime === undefined ? undefined : Math.max(0, this.settings.clock.now() - counts.oldestSendTime);
    const deadLetterSourceQueues = sources.get(name) ?? [];
    return { name, config, createTime, updateTime, counts, oldestMessageAgeMs, deadLetterSourceQueues };
  }

  private async storeMessages(queueName: string, messages: readonly OutgoingMessage[], batchField: string): Promise<SendResult[]> {
    const queue = this.memory.registry.get(queueName);
    const dataId = queue.record.dataId;
    const now = this.settings.clock.now();
    const intake = intakeMessages(queue, messages, batchField, now);
    const { stored, ops, rememberedIds, results, firstSends } = queue.fifo ? fifoSends(queue, intake, now) : standardSends(intake);
    let release: () => void;
    try {
      this.memory.deduplicationBudget.check(rememberedIds);
      release = this.memory.storedBudget.reserve(stored.length);
    } catch (error) {
      // Refused before anything was written (BROKER_FULL): the ids this send remembered must not answer its retry.
      firstSends?.abandon();
      throw error;
    }
    try {
      const written = this.memory.store.commit(ops);
      await (firstSends === undefined ? written : firstSends.awaitWritten(written));
    } finally {
      // Adopted below in the same turn, so the queue counts them from here on.
      release();
    }
    this.settings.events.sent(queueName, stored.length, results.length - stored.length);
    // Only now, durable, may the messages be seen. A purge or delete that
    // committed meanwhile removed them, as if they were sent just before it.
    if (!queue.deleted && queue.record.dataId === dataId && stored.length > 0) {
      const now = this.settings.clock.now();
      for (const op of stored) queue.add(op.entry, now);
      this.memory.maintenance.advance(queue);
    }
    return results;
  }

  /**
   * A queue to move messages from `from` to: this broker's, or (cluster
   * mode) the name of another broker's; QUEUE_NOT_FOUND if none, and
   * INVALID_ARGUMENT if it is not of `from`'s kind (FIFO messages need a
   * FIFO queue, and a FIFO queue takes nothing else).
   */
  private async moveTarget(name: string, field: string, from: QueueState): Promise<MoveTarget> {
    const local = this.memory.registry.find(name);
    const fifo = local !== undefined ? local.fifo : await this.settings.cluster.fifoElsewhere(name);
    if (fifo !== undefined && fifo !== from.fifo) {
      throw invalidArgument(field, `must be ${from.fifo ? "a FIFO" : "a standard"} queue, as "${from.record.name}" is`);
    }
    if (local !== undefined) return local;
    // Bad names, unknown queues and queues moving away answer as the registry does.
    return (await this.memory.deadLetters.find(name)) ?? this.memory.registry.get(name, field);
  }

  private requireTimeout(queue: QueueState, timeoutMs: number | undefined): number {
    if (timeoutMs === undefined) throw invalidArgument("visibility_timeout", "is required");
    checkVisibilityTimeout(timeoutMs, queue.record.config);
    return timeoutMs;
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
