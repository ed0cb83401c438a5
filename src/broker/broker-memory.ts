import { HoldshelfError } from "../errors/holdshelf-error.js";
import type { StoredState } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import { createMessageAdmin, type MessageAdmin } from "./message-admin.js";
import { createArrivalRules, type ArrivalRules } from "./arrival-rules.js";
import { BackgroundWork } from "./background-work.js";
import type { BrokerEvents } from "./broker-events.js";
import type { ClusterQueues } from "../store/cluster-queues.js";
import { DeduplicationIdBudget, StoredMessageBudget, type BrokerLimits } from "./broker-limits.js";
import { createCommitAndServe, type CommitAndServe } from "./commit-and-serve.js";
import { DeadLetters } from "./dead-letters.js";
import { LeaseChanges } from "./lease-changes.js";
import { LeaseEndings } from "./lease-endings.js";
import { LeaseTracking, type TrackedLease } from "./lease-tracking.js";
import { Maintenance } from "./maintenance.js";
import { MoveTasks } from "./move-tasks.js";
import { QueueRegistry } from "./queue-registry.js";
import type { QueueState } from "./queue-state.js";
import { ReceiptHandles } from "./receipt-handles.js";
import { createReceiveRules, type ReceiveRules } from "./receive-rules.js";
import type { RevocableStore } from "./revocable-store.js";
import { createSendRules, type SendRules } from "./send-rules.js";
import { WaitingReceives } from "./waiting-receives.js";

/** What one load of the broker's memory is built from. */
export interface BrokerMemoryOptions {
  /** The view of the store this load writes through; revoked when storage fails. */
  readonly store: RevocableStore;
  /** What the store held when this load was made. */
  readonly stored: StoredState;
  readonly clock: Clock;
  readonly onBackgroundError: (error: unknown) => void;
  readonly events: BrokerEvents;
  readonly limits: BrokerLimits;
  /** The queues other brokers serve (cluster mode), for moves and checks across shards. */
  readonly cluster: ClusterQueues;
}

/**
 * The broker's in-memory state, rebuilt from the store at start and after a
 * storage outage: every part, and the rules that work on them, wired to one
 * another and to nothing else. A reload replaces the whole object at once.
 */
export interface BrokerMemory {
  readonly store: RevocableStore;
  readonly registry: QueueRegistry;
  readonly handles: ReceiptHandles;
  readonly waiting: WaitingReceives;
  /** Which Heartbeat stream holds each lease. */
  readonly leases: LeaseTracking;
  readonly leaseChanges: LeaseChanges;
  readonly endings: LeaseEndings;
  readonly sending: SendRules;
  readonly receiving: ReceiveRules;
  /** Messages other brokers moved here (cluster mode). */
  readonly arrivals: ArrivalRules;
  readonly deadLetters: DeadLetters;
  /** Message move tasks running here. */
  readonly moveTasks: MoveTasks;
  readonly background: BackgroundWork;
  readonly maintenance: Maintenance;
  readonly storedBudget: StoredMessageBudget;
  readonly deduplicationBudget: DeduplicationIdBudget;
  readonly commitAndServe: CommitAndServe;
  /** An operator's actions on one message by its id (DiscardMessage, MoveMessage). */
  readonly messageAdmin: MessageAdmin;
  /** Starts the timers and resumes the stored move tasks: at open, and after a reload. */
  serve(): void;
  /**
   * Storage failed: this memory's writes are refused with `error`, its timers
   * stop, its move tasks stop (stored as running, for the reload to resume)
   * and its waiting receives fail with `error`.
   */
  revoke(error: HoldshelfError): void;
  /** The broker is shutting down: the timers stop, move tasks stop with `reason`, and waiting receives end empty-handed. */
  close(reason: HoldshelfError): void;
  /** Makes each of a closed stream's leases visible at once (LeaseChanges.release), in one batch per queue. */
  releaseLeases(held: readonly TrackedLease[]): Promise<void>;
}

/**
 * Builds the memory from what the store holds. Its parts call back into
 * this memory alone, so one that a reload replaced can reach nothing of the
 * next. The timers are not started: the broker starts them.
 */
export function createBrokerMemory(options: BrokerMemoryOptions): BrokerMemory {
  const { store, stored, clock, onBackgroundError, events, limits, cluster } = options;
  const handles = new ReceiptHandles(stored.handleKey);
  const waiting = new WaitingReceives(clock, limits.maxWaitingReceives);
  const leases = new LeaseTracking();
  const background = new BackgroundWork(onBackgroundError);
  const advance = (queue: QueueState): void => maintenance.advance(queue);
  // A deleted queue's waiting receives fail, its timer stops, its leases are forgotten.
  const forgetQueue = (queue: QueueState): void => {
    maintenance.disarm(queue);
    leases.forgetQueue(queue);
    waiting.failAll(queue, new HoldshelfError("QUEUE_NOT_FOUND", `queue "${queue.record.name}" was deleted`));
  };
  // A queue gone to another broker (cluster mode) goes alike, failing with `error`, and its move task stops;
  // Heartbeat streams that renew its leases reach the new owner through forwarding.
  const leaveQueue = (queue: QueueState, error: HoldshelfError): void => {
    maintenance.disarm(queue);
    // Left stored as running, for the queue's next owner to resume.
    moveTasks.stop(error, [queue]);
    leases.forgetQueue(queue);
    waiting.failAll(queue, error);
  };
  const registryEvents = { onDeleted: forgetQueue, onEvicted: leaveQueue };
  const registry = new QueueRegistry(store, clock, registryEvents, stored, limits.maxQueues, cluster);
  const storedBudget = new StoredMessageBudget(limits.maxStoredMessages, () => registry.all());
  const deduplicationBudget = new DeduplicationIdBudget(limits.maxDeduplicationIds, () => registry.all());
  const deadLetters = new DeadLetters(store, clock, registry, advance, events, cluster);
  const moveTasks = new MoveTasks(clock, registry, deadLetters, onBackgroundError, events);
  const endings = new LeaseEndings(clock, leases, deadLetters, background);
  const leaseChanges = new LeaseChanges(clock, handles, leases, endings, events);
  const maintenance: Maintenance = new Maintenance(
    clock,
    registry,
    waiting,
    (ops) => store.commit(ops),
    onBackgroundError,
    (queue, expired) => {
      // Expired messages keep their deadline as their ready time until their rules run.
      const now = clock.now();
      for (const message of expired) events.leaseExpired(queue.record.name, now - message.readyAt);
      leases.expired(queue, expired);
      const ops = endings.endAll(queue, expired, "expired");
      if (ops.length > 0) background.start(store.commit(ops));
    },
    (queue, removed) => {
      removed.forEach((message) => {
        leases.untrack(queue, message.id);
      });
      events.retentionExpired(queue.record.name, removed.length);
    },
  );
  const commitAndServe = createCommitAndServe(store, advance);
  const sending = createSendRules({ clock, store, storedBudget, deduplicationBudget, advance, events });
  const receiving = createReceiveRules({
    clock,
    store,
    handles,
    tracking: leases,
    waiting,
    deadLetters,
    background,
    advance,
    commitAndServe,
    events,
  });
  const arrivals = createArrivalRules({ clock, store, registry, background, advance });
  const messageAdmin = createMessageAdmin({ store, leases, deadLetters, commitAndServe, advance });
  return {
    store,
    registry,
    handles,
    waiting,
    leases,
    leaseChanges,
    endings,
    sending,
    receiving,
    arrivals,
    deadLetters,
    moveTasks,
    background,
    maintenance,
    storedBudget,
    deduplicationBudget,
    commitAndServe,
    messageAdmin,
    serve() {
      maintenance.start();
      moveTasks.resume(registry.all());
    },
    revoke(error) {
      store.revoke(error);
      maintenance.stop();
      moveTasks.stop(error);
      for (const queue of registry.all()) waiting.failAll(queue, error);
    },
    async releaseLeases(held) {
      const writes = leaseChanges.release(held);
      await Promise.all([...writes].map(([queue, ops]) => commitAndServe(queue, ops)));
    },
    close(reason) {
      maintenance.stop();
      // Stored as running: they resume when a broker opens on the store again; none starts after this.
      moveTasks.close(reason);
      waiting.releaseAll();
    },
  };
}
