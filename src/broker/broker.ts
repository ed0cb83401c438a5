import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { StoredQueue, StoredState, StoreOp } from "../store/store.js";
import { createBrokerMemory, type BrokerMemory } from "./broker-memory.js";
import { brokerSettings, type BrokerOptions, type BrokerSettings } from "./broker-options.js";
import type { Arrival } from "../store/cluster-queues.js";
import { describeQueue } from "./describe-queue.js";
import { LeaseStreams } from "./lease-streams.js";
import { peekMessages } from "./message-peek.js";
import { checkMoveTaskRate } from "./move-tasks.js";
import type { QueueConfigInput } from "./queue-config.js";
import type { QueueConfigPath } from "./queue-config-update.js";
import type { QueueState } from "./queue-state.js";
import { checkBatchSize, checkRedriveBounds, resolveReceiveOptions } from "./request-limits.js";
import { RevocableStore } from "./revocable-store.js";
import type { Delivery, EntryOutcome, MoveTaskInfo, OutgoingMessage } from "./types.js";
import type { PeekPage, QueueInfo, QueuePage, ReceiveOptions, SendResult } from "./types.js";

// Why a move task stops at close: it was stored as running, and resumes then.
const shuttingDown = "the broker is shutting down; the task resumes when it starts again";

/**
 * The broker: the SQS message lifecycle over a Store, as a thin facade. Each method validates, hands the
 * change to the rules in its memory (see BrokerMemory), commits what they changed, and answers once that is
 * durable: in one atomic batch, unless its doc says otherwise (closeLeaseStream, redriveMessages, message move
 * tasks). Rules run on an injected clock, and `runMaintenance` does on demand what the timers do. Callers
 * take the slice of it they use (broker-slices.ts). In order: queue admin, messages, move tasks, lifecycle,
 * queues moving between brokers (cluster mode), storage failures; the streams that hold leases (Heartbeat,
 * Subscribe) are `streams`.
 */
export class Broker {
  private closed = false;
  /** Set while storage fails: every call that needs it is refused with this, until `reload`. */
  private unavailable: HoldshelfError | undefined;
  /** The Heartbeat and Subscribe streams, which hold leases: see LeaseStreams. */
  readonly streams: LeaseStreams;

  private constructor(
    // Replaced whole by `reload`.
    private memory: BrokerMemory,
    private readonly settings: BrokerSettings,
  ) {
    this.streams = new LeaseStreams({
      settings,
      memory: () => this.memory,
      queue: (name) => this.queue(name),
      mayWait: () => !this.closed,
      storageWorks: () => this.unavailable === undefined,
    });
  }

  /** Loads the store's state into memory and starts the timers. */
  static async open(options: BrokerOptions): Promise<Broker> {
    const stored = await options.store.load();
    const settings = brokerSettings(options);
    const broker = new Broker(
      createBrokerMemory({ ...settings, store: new RevocableStore(options.store), stored }),
      settings,
    );
    broker.memory.serve();
    return broker;
  }

  /** Creates a queue, or returns the existing one if its configuration is the same. */
  async createQueue(name: string, config?: QueueConfigInput): Promise<QueueInfo> {
    this.requireStorage();
    return this.describe(await this.memory.registry.create(name, config));
  }

  /** A queue with its configuration and exact counts (in cluster mode, its dead-letter sources on other brokers as last read). */
  getQueue(name: string): QueueInfo {
    return this.describe(this.queue(name, "name"));
  }

  /** Reads again which queues on other brokers name each dead-letter queue (cluster mode; else as last read, within a second). */
  async refreshDeadLetterSources(): Promise<void> {
    await this.settings.cluster.refresh();
  }

  /** A page of queues in name order; with `visible`, only the queues it accepts. */
  listQueues(prefix = "", pageSize = 0, pageToken = "", visible?: (name: string) => boolean): QueuePage {
    this.requireStorage();
    const page = this.memory.registry.list(prefix, pageSize, pageToken, visible);
    // One pass for the dead-letter sources of the whole page, not one per queue.
    const sources = this.memory.registry.knownDeadLetterSources();
    return { queues: page.queues.map((queue) => this.describe(queue, sources)), nextPageToken: page.nextPageToken };
  }

  /** Every queue, as `getQueue` describes it: what a metrics scrape reads. */
  allQueues(): QueueInfo[] {
    const sources = this.memory.registry.knownDeadLetterSources();
    return [...this.memory.registry.all()].map((queue) => this.describe(queue, sources));
  }

  /** Replaces a queue's whole configuration (unset fields take their defaults), or with `fields` only those (and single tags). */
  async updateQueue(name: string, config?: QueueConfigInput, fields?: readonly QueueConfigPath[]): Promise<QueueInfo> {
    this.requireStorage();
    const queue = await this.memory.registry.update(name, config, fields);
    // A larger max_in_flight may make room for waiting receives.
    this.memory.maintenance.advance(queue);
    return this.describe(queue);
  }

  /** Deletes a queue and its messages, unless it is another queue's dead-letter queue. */
  async deleteQueue(name: string): Promise<void> {
    this.requireStorage();
    await this.memory.registry.delete(name);
    this.streams.queuesGone([name], new HoldshelfError("QUEUE_NOT_FOUND", `queue "${name}" was deleted`));
  }

  /** Removes every message of a queue; returns how many. */
  async purgeQueue(name: string): Promise<number> {
    const queue = this.queue(name, "name");
    const purged = await this.memory.registry.purge(name);
    this.memory.leases.forgetQueue(queue);
    this.memory.maintenance.advance(queue);
    return purged;
  }

  /** Stores one message; returns its id (a FIFO queue's duplicate: the first send's) and a FIFO queue's sequence number. */
  async sendWithResult(queueName: string, message: OutgoingMessage): Promise<SendResult> {
    const [result] = await this.memory.sending.send(this.queue(queueName), [message], "");
    return result!;
  }

  /** Stores 1 to 100 messages atomically (a FIFO queue's duplicates aside); returns their ids and sequence numbers in order. */
  async sendBatchWithResults(queueName: string, messages: readonly OutgoingMessage[]): Promise<SendResult[]> {
    this.requireStorage();
    checkBatchSize(messages.length, "entries");
    return this.memory.sending.send(this.memory.registry.get(queueName), messages, "entries");
  }

  /** Leases up to maxMessages visible messages, waiting for them if asked to. */
  async receive(queueName: string, options: ReceiveOptions = {}): Promise<Delivery[]> {
    const queue = this.queue(queueName);
    const resolved = resolveReceiveOptions(options, queue.record.config);
    if (options.signal?.aborted) return [];
    return this.memory.receiving.receive(queue, { ...resolved, mayWait: !this.closed }, options.signal);
  }

  /** Deletes the message a receipt handle names; succeeds if it is already gone. */
  async delete(queueName: string, receiptHandle: string): Promise<void> {
    await this.changeLeases(queueName, (queue, ops) => this.memory.leaseChanges.delete(queue, receiptHandle, ops));
  }

  /** Deletes several messages; one outcome per handle, in order. */
  async deleteBatch(queueName: string, handles: readonly string[]): Promise<EntryOutcome[]> {
    return this.changeLeases(queueName, (queue, ops) => this.memory.leaseChanges.deleteEach(queue, handles, ops));
  }

  /** Sets a lease's deadline to now + timeout (0 releases the message); returns the new deadline. */
  async changeVisibility(queueName: string, receiptHandle: string, timeoutMs: number | undefined): Promise<number> {
    return this.changeLeases(queueName, (queue, ops) =>
      this.memory.leaseChanges.changeOne(queue, receiptHandle, timeoutMs, ops),
    );
  }

  /** Changes several leases; one outcome per handle, in order. */
  async changeVisibilityBatch(
    queueName: string,
    receiptHandles: readonly string[],
    timeoutMs: number | undefined,
  ): Promise<EntryOutcome[]> {
    return this.changeLeases(queueName, (queue, ops) =>
      this.memory.leaseChanges.changeEach(queue, receiptHandles, timeoutMs, ops),
    );
  }

  /** A page of a queue's messages, oldest first, with their states, read without changing anything: see message-peek.ts. */
  async peekMessages(queueName: string, pageSize = 0, pageToken = ""): Promise<PeekPage> {
    return peekMessages(this.queue(queueName), this.memory.store, this.settings.clock.now(), pageSize, pageToken);
  }

  /** Deletes one message by its id, whatever its state (no receipt handle): see MessageAdmin.discard. */
  async discardMessage(queueName: string, messageId: string): Promise<void> {
    await this.memory.messageAdmin.discard(this.queue(queueName), messageId);
  }

  /**
   * Moves one message by its id, whatever its state, to another queue or with "" back to its dead-letter
   * source queue, as a redrive moves it (see MessageAdmin.move); returns the queue it went to.
   */
  async moveMessage(queueName: string, messageId: string, destinationName: string): Promise<string> {
    return this.memory.messageAdmin.move(this.queue(queueName), messageId, destinationName);
  }

  /**
   * Moves visible messages out of a dead-letter queue, oldest first, to a destination queue or back to each
   * one's source queue (DeadLetters.redrive), in atomic batches of up to 100. Returns how many moved.
   */
  async redriveMessages(
    deadLetterQueueName: string,
    destinationName: string,
    maxMessages: number,
    maxPerSecond: number,
    signal?: AbortSignal,
  ): Promise<number> {
    const source = this.queue(deadLetterQueueName, "dead_letter_queue");
    const destination = await this.memory.deadLetters.destination(destinationName, source, "dead-letter queue");
    checkRedriveBounds(maxMessages, maxPerSecond);
    this.memory.maintenance.advance(source);
    return this.memory.deadLetters.redrive(source, destination, maxMessages || Infinity, maxPerSecond, signal);
  }

  /** Starts a redrive in the background (0 to 500 messages a second; 0: no limit); answers once stored, with its handle. */
  async startMessageMoveTask(sourceName: string, destinationName: string, maxPerSecond: number): Promise<string> {
    const source = this.queue(sourceName, "source_queue");
    await this.memory.deadLetters.destination(destinationName, source, "source queue");
    checkMoveTaskRate(maxPerSecond);
    this.memory.maintenance.advance(source);
    return this.memory.moveTasks.start(source, destinationName, maxPerSecond);
  }

  /** A source queue's last message move tasks, newest first: `maxResults` 1 to 10, 0 meaning 1 (as SQS). */
  listMessageMoveTasks(sourceName: string, maxResults: number): MoveTaskInfo[] {
    return this.memory.moveTasks.list(this.queue(sourceName, "source_queue"), maxResults);
  }

  /** Cancels a running message move task once its current batch is moved; returns how many messages it moved. */
  async cancelMessageMoveTask(taskHandle: string): Promise<number> {
    this.requireStorage();
    return this.memory.moveTasks.cancel(taskHandle);
  }

  /** How many long-poll Receives are waiting, over all queues. */
  get waitingReceiveCount(): number {
    return this.memory.waiting.size;
  }

  /** Does now everything that is due: expired leases and delays become visible, retention runs. */
  async runMaintenance(): Promise<void> {
    await this.memory.maintenance.runDue();
    await this.memory.background.settled();
  }

  /** Resolves once background work has finished: a running move task only when it ends or is stopped (close). */
  async settled(): Promise<void> {
    await this.memory.moveTasks.settled();
    await this.memory.background.settled();
  }

  /** Stops the timers, ends waiting receives empty-handed and asks lease streams to end; its owner closes the store. */
  close(): void {
    this.closed = true;
    this.memory.close(new HoldshelfError("SHUTTING_DOWN", shuttingDown));
    this.streams.closing();
  }

  /** Serves queues loaded from shards this broker just gained. */
  adoptQueues(queues: readonly StoredQueue[]): void {
    const adopted = this.memory.registry.adopt(queues);
    for (const queue of adopted) this.memory.maintenance.advance(queue);
    this.memory.moveTasks.resume(adopted);
  }

  /** Shows messages that other brokers moved into queues this broker serves: see ArrivalRules. */
  takeArrivals(arrivals: readonly Arrival[]): void {
    this.memory.arrivals.take(arrivals);
  }

  /** Stops serving queues whose shards go to another broker: calls on them fail with `error` (QueueRegistryEvents.onEvicted). */
  evictQueues(names: readonly string[], error: HoldshelfError): void {
    this.memory.registry.evict(names, error);
    this.streams.queuesGone(names, error);
  }

  /**
   * Storage failed: until `reload`, every call that needs it is refused with `error`, and lease streams end
   * with it. Work still running can no longer write: its memory is about to be rebuilt from disk, where its
   * changes may never have landed (BrokerMemory.revoke).
   */
  suspend(error: HoldshelfError): void {
    if (this.unavailable !== undefined) return;
    this.unavailable = error;
    this.memory.revoke(error);
    this.streams.storageFailed(error);
  }

  /** Whether storage failed and the broker waits for `reload`. */
  get suspended(): boolean {
    return this.unavailable !== undefined;
  }

  /** Storage works again: rebuilds the memory from `stored` (what the reopened store holds) and serves. */
  reload(stored: StoredState): void {
    // The old memory's parts call back into it alone, and `suspend` stopped
    // its timers and revoked its store: nothing of it can reach the new one.
    this.memory = createBrokerMemory({ ...this.settings, store: this.memory.store.renewed(), stored });
    this.unavailable = undefined;
    // A broker closed meanwhile (a shutdown during the outage) arms no timers,
    // not even from a scrape's describe(): nothing would cancel them.
    if (this.closed) this.memory.maintenance.stop();
    else this.memory.serve();
  }

  private requireStorage(): void {
    if (this.unavailable !== undefined) throw this.unavailable;
  }

  /** The queue of that name (see QueueRegistry.get), unless storage failed. */
  private queue(name: string, field?: string): QueueState {
    this.requireStorage();
    return this.memory.registry.get(name, field);
  }

  /** Advances the queue first, so that counts are exact: see Maintenance.advance for why a read may write. */
  private describe(queue: QueueState, sources = this.memory.registry.knownDeadLetterSources()): QueueInfo {
    this.memory.maintenance.advance(queue);
    return describeQueue(queue, this.settings.clock.now(), sources);
  }

  /** Runs a lease rule on a queue and commits the writes it appended in one batch (`lingerMs` as Store.commit). */
  private async changeLeases<T>(
    queueName: string,
    rule: (queue: QueueState, ops: StoreOp[]) => T,
    lingerMs?: number,
  ): Promise<T> {
    const queue = this.queue(queueName);
    const ops: StoreOp[] = [];
    const result = rule(queue, ops);
    await this.memory.commitAndServe(queue, ops, lingerMs);
    return result;
  }
}
