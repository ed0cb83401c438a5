import { invalidArgument, type HoldshelfError } from "../errors/holdshelf-error.js";
import type { StoreOp } from "../store/store.js";
import type { BrokerMemory } from "./broker-memory.js";
import type { BrokerSettings } from "./broker-options.js";
import { tooManySubscribers } from "./broker-limits.js";
import { LeaseStream, type LeaseStreamListener } from "./lease-tracking.js";
import type { QueueState } from "./queue-state.js";
import { renewalLingerMs } from "./renewal-linger.js";
import { checkAckCount, checkRenewalCount, checkVisibilityTimeout } from "./request-limits.js";
import { Subscription, type FlowControl, type SubscriptionListener } from "./subscription.js";
import type { Delivery, EntryOutcome, LeaseRenewal, LeaseState } from "./types.js";

/** What the lease streams reach of their Broker: its memory as it is now (a reload replaces it), and its state. */
export interface LeaseStreamsHost {
  readonly settings: BrokerSettings;
  memory(): BrokerMemory;
  /** The queue of that name, unless storage failed (Broker.queue). */
  queue(name: string): QueueState;
  /** False once the broker is closing. */
  mayWait(): boolean;
  /** False while storage fails: leases can then be released by nobody. */
  storageWorks(): boolean;
}

/** A Subscribe stream's opening: the lease of its deliveries and its flow control. */
export interface SubscribeOptions {
  /** Undefined: the queue's visibility_timeout. */
  readonly visibilityTimeoutMs: number | undefined;
  readonly flow: FlowControl;
}

/** What one Subscribe request settled: an outcome per ack and a state per renewal, in request order. */
export interface StreamSettlement {
  readonly acks: EntryOutcome[];
  readonly leases: LeaseState[];
}

/**
 * The connections that hold leases: Heartbeat streams, which renew leases of
 * Receive's deliveries, and Subscribe streams (Subscription), which are
 * delivered to under their credit and settle what they hold. Connections,
 * not state loaded from the store: they outlive a reload of the broker's
 * memory, and are told of the outage.
 */
export class LeaseStreams {
  private readonly streams = new Set<LeaseStream>();
  private readonly subscribers = new Map<string, Set<Subscription>>();
  private subscriptions = 0;

  constructor(private readonly host: LeaseStreamsHost) {}

  /** Opens a Heartbeat stream; the listener hears of its leases that expire. */
  open(listener: LeaseStreamListener): LeaseStream {
    const stream = new LeaseStream(listener);
    this.streams.add(stream);
    return stream;
  }

  /** How many lease streams are open, Subscribe streams included. */
  get count(): number {
    return this.streams.size;
  }

  /** How many Subscribe streams are open. */
  get subscriberCount(): number {
    return this.subscriptions;
  }

  /**
   * Opens a Subscribe stream on a queue. Throws QUEUE_NOT_FOUND, INVALID_ARGUMENT for a visibility timeout
   * out of bounds (0 included: a stream's deliveries are leases), or TOO_MANY_SUBSCRIBERS.
   */
  subscribe(queueName: string, listener: SubscriptionListener, options: SubscribeOptions): Subscription {
    const queue = this.host.queue(queueName);
    const { visibilityTimeoutMs, flow } = options;
    if (visibilityTimeoutMs !== undefined) {
      checkVisibilityTimeout(visibilityTimeoutMs, queue.record.config);
      if (visibilityTimeoutMs === 0) throw invalidArgument("visibility_timeout", "must not be 0 on a stream");
    }
    const max = this.host.settings.limits.maxSubscribersPerQueue;
    const subscribers = this.subscribers.get(queueName) ?? new Set<Subscription>();
    if (subscribers.size >= max) throw tooManySubscribers(queueName, max);
    const subscription = new Subscription(listener, queueName, visibilityTimeoutMs, flow);
    subscribers.add(subscription);
    this.subscribers.set(queueName, subscribers);
    this.subscriptions++;
    this.streams.add(subscription);
    return subscription;
  }

  /**
   * Leases messages for a Subscribe stream, as many as are visible and fit its credit, waiting (without end,
   * and outside --max-waiting-receives) until at least one is; the stream then holds them. Resolves empty
   * when `signal` aborts or the broker closes, or at once when the credit is spent. Fails with the queue's
   * error when it is deleted or leaves this broker while waiting.
   */
  async deliver(subscription: Subscription, signal: AbortSignal): Promise<Delivery[]> {
    const queue = this.host.queue(subscription.queueName);
    const credit = subscription.credit();
    if (credit === undefined || signal.aborted) return [];
    const { config } = queue.record;
    const visibilityTimeoutMs = subscription.visibilityTimeoutMs ?? config.visibilityTimeoutMs;
    // A queue updated since the stream opened may have lowered its max_lease_duration.
    checkVisibilityTimeout(visibilityTimeoutMs, config);
    const request = {
      maxMessages: credit.maxMessages,
      visibilityTimeoutMs,
      waitTimeMs: Infinity,
      mayWait: this.host.mayWait(),
      holder: { stream: subscription, maxBytes: credit.maxBytes },
    };
    const deliveries = await this.host.memory().receiving.receive(queue, request, signal);
    const { events } = this.host.settings;
    if (deliveries.length > 0) events.pushed(queue.record.name, deliveries.length);
    if (subscription.credit() === undefined && subscription.flow.maxMessages > 0)
      events.creditFilled(queue.record.name);
    return deliveries;
  }

  /**
   * Settles one Subscribe request on a queue: deletes its acks' messages (LeaseChanges.ackEach) and renews
   * its leases (LeaseChanges.renewEach) in one durable write. Renewals alone may linger to share an fsync,
   * as Heartbeat's do (renewal-linger.ts); acks never do: their confirmations are what a consumer waits on.
   */
  async settle(
    stream: LeaseStream,
    queueName: string,
    acks: readonly string[],
    renewals: readonly LeaseRenewal[],
    moreQueued: boolean,
  ): Promise<StreamSettlement> {
    // Both counts before anything changes: a refused request must change nothing, its acks included.
    checkAckCount(acks.length);
    checkRenewalCount(renewals.length);
    const queue = this.host.queue(queueName);
    const memory = this.host.memory();
    const ops: StoreOp[] = [];
    const ackOutcomes = memory.leaseChanges.ackEach(queue, acks, ops);
    const leases = memory.leaseChanges.renewEach(stream, queue, renewals, ops);
    if (acks.length > 0) this.host.settings.events.streamAcked(queue.record.name, acks.length);
    const lingerMs = acks.length > 0 ? 0 : this.lingerMs(moreQueued);
    await memory.commitAndServe(queue, ops, lingerMs);
    return { acks: ackOutcomes, leases };
  }

  /**
   * Renews leases on a Heartbeat stream: a settle without acks, in one durable write, which may linger to
   * share an fsync (renewal-linger.ts). A stream answers in order: `moreQueued` says requests wait behind
   * this one (no linger), and a stream whose next request arrives meanwhile calls `hurry`.
   */
  async renew(
    stream: LeaseStream,
    queueName: string,
    renewals: readonly LeaseRenewal[],
    moreQueued = false,
  ): Promise<LeaseState[]> {
    return (await this.settle(stream, queueName, [], renewals, moreQueued)).leases;
  }

  /** Starts lingering renewal writes at once: a barrier never lingers, and takes them along. */
  hurry(): void {
    // The renewals' own commits report any failure.
    this.host
      .memory()
      .store.commit([])
      .catch(() => undefined);
  }

  /**
   * Ends a stream; returns how many leases it held. With `release` each becomes visible at once (the client
   * went away mid-work), in one batch per queue; otherwise leases run their course.
   */
  async close(stream: LeaseStream, release: boolean): Promise<number> {
    if (!this.streams.delete(stream)) return 0;
    const held = [...stream.tracked.values()];
    if (stream instanceof Subscription) this.unsubscribe(stream);
    const memory = this.host.memory();
    memory.leases.forgetStream(stream);
    // Without storage nothing can be released; the reload puts every lease back as the disk holds it.
    if (release && this.host.storageWorks()) await memory.releaseLeases(held);
    return held.length;
  }

  /** The broker is shutting down: every stream is asked to end. */
  closing(): void {
    for (const stream of [...this.streams]) stream.listener.brokerClosing();
  }

  /** Storage failed: every stream ends with `error`. */
  storageFailed(error: HoldshelfError): void {
    for (const stream of [...this.streams]) stream.listener.storageUnavailable?.(error);
  }

  /** Queues were deleted or left this broker: their Subscribe streams end with `error`. */
  queuesGone(names: readonly string[], error: HoldshelfError): void {
    for (const name of names) {
      for (const subscription of [...(this.subscribers.get(name) ?? [])]) subscription.listener.queueGone(error);
    }
  }

  private unsubscribe(subscription: Subscription): void {
    const subscribers = this.subscribers.get(subscription.queueName);
    if (subscribers?.delete(subscription) !== true) return;
    this.subscriptions--;
    if (subscribers.size === 0) this.subscribers.delete(subscription.queueName);
  }

  private lingerMs(moreQueued: boolean): number {
    return renewalLingerMs(this.host.settings.renewalLinger, this.streams.size, moreQueued);
  }
}
