import { HoldshelfError, invalidArgument, queueNotFound } from "../errors/holdshelf-error.js";
import type { IdSequence, QueueRecord, Store, StoredMoveTask, StoredQueue, StoredState } from "../store/store.js";
import { decodePageToken, defaultPageSize, encodePageToken, maxPageSize } from "../protocol/queue-pages.js";
import { tooManyQueues } from "./broker-limits.js";
import { noneElsewhere, type ClusterQueues } from "../store/cluster-queues.js";
import type { Clock } from "../time/clock.js";
import { ViolationList } from "../errors/violation-list.js";
import {
  checkQueueConfig,
  checkQueueName,
  keepingEarlierDefaults,
  resolveQueueConfig,
  sameQueueConfig,
  type QueueConfig,
  type QueueConfigInput,
} from "./queue-config.js";
import { mergeQueueConfig, type QueueConfigPath } from "./queue-config-update.js";
import { fifoNameSuffix } from "../protocol/fifo-name-suffix.js";
import { QueueState } from "./queue-state.js";
import { DepartureBound } from "./departure-bound.js";

/**
 * Hooks the registry calls when a queue leaves it. A purge calls none: the
 * queue lives on, and the purge's caller forgets its leases.
 */
export interface QueueRegistryEvents {
  /** The queue was deleted: fail its waiting receives, stop its timer, forget its leases. */
  onDeleted(queue: QueueState): void;
  /** The queue went to another broker (cluster mode): the same, failing with `error`, and stop its move task. */
  onEvicted(queue: QueueState, error: HoldshelfError): void;
}

/**
 * The queues by name, and the admin operations on them. Each operation is
 * durable before it changes memory, so nobody sees a queue (or a
 * configuration) that a crash could take back.
 */
export class QueueRegistry {
  private readonly byName = new Map<string, QueueState>();
  /** The tail of each name's chain of admin operations; see `exclusive`. */
  private readonly adminChains = new Map<string, Promise<unknown>>();
  private readonly ids: IdSequence;
  /** Queues that moved to another broker (cluster mode): calls on them fail with the error, not QUEUE_NOT_FOUND. */
  private readonly movedAway = new Map<string, HoldshelfError>();
  /** Every queue's memory of departed messages together stays within this (see DepartureBound). */
  private readonly departureBound = new DepartureBound();
  /** Creations whose record is still being written: they count against `maxQueues` already. */
  private creating = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly events: QueueRegistryEvents,
    stored: StoredState,
    // Queues already stored all load, even past a lowered limit: only new ones are refused.
    private readonly maxQueues = Infinity,
    // Cluster mode: a redrive policy may name, and a dead-letter queue may serve, a queue of another broker.
    private readonly cluster: ClusterQueues = noneElsewhere,
  ) {
    this.ids = stored.ids ?? counterSequence(stored.nextSequence);
    this.adopt(stored.queues);
  }

  /** Takes in queues loaded from the store: at start, or when this broker gains their shard (cluster mode). */
  adopt(queues: readonly StoredQueue[]): QueueState[] {
    const now = this.clock.now();
    return queues.map(({ record, schedule, deduplications }) => {
      const queue = QueueState.loaded(record, schedule, now, deduplications, this.departureBound);
      this.byName.set(record.name, queue);
      this.movedAway.delete(record.name);
      return queue;
    });
  }

  /**
   * Lets queues go to another broker (cluster mode): they leave memory, marked
   * deleted so work still running on them stops, and calls on them fail with
   * `error` until they come back. Their data stays where it is.
   */
  evict(names: readonly string[], error: HoldshelfError): void {
    const evicted: QueueState[] = [];
    for (const name of names) {
      const queue = this.byName.get(name);
      this.movedAway.set(name, error);
      if (queue === undefined) continue;
      this.byName.delete(name);
      queue.deleted = true;
      evicted.push(queue);
    }
    for (const queue of evicted) this.events.onEvicted(queue, error);
  }

  /** The queue of that name. Throws INVALID_ARGUMENT for a bad name, QUEUE_NOT_FOUND for an unknown one. */
  get(name: string, field = "queue"): QueueState {
    checkQueueName(name, field);
    const queue = this.byName.get(name);
    if (queue === undefined) throw this.movedAway.get(name) ?? queueNotFound(name);
    return queue;
  }

  /** Every queue, in no particular order. */
  all(): IterableIterator<QueueState> {
    return this.byName.values();
  }

  /**
   * Creates a queue, or returns the existing one if its configuration is the
   * same (also at the queue limit, so a retry stays safe; an unset
   * max_message_bytes matches a queue at its earlier default).
   */
  async create(name: string, input: QueueConfigInput | undefined): Promise<QueueState> {
    // The name and every setting are checked together: one answer names every bad field.
    const violations = new ViolationList();
    violations.collect(() => checkQueueName(name, "name"));
    const config = checkQueueConfig(input, "config.", violations);
    if (name.endsWith(fifoNameSuffix) && input?.fifo !== true) {
      violations.add("config.fifo", `must be set for a queue whose name ends in "${fifoNameSuffix}"`);
    }
    violations.throwIfAny();
    await this.checkRedrive(name, config);
    return this.exclusive(name, async () => {
      const existing = this.byName.get(name);
      if (existing !== undefined) {
        const current = existing.record.config;
        if (sameQueueConfig(current, keepingEarlierDefaults(config, input, current))) return existing;
        throw new HoldshelfError("QUEUE_ALREADY_EXISTS", `queue "${name}" exists with another configuration`);
      }
      if (this.byName.size + this.creating >= this.maxQueues) throw tooManyQueues(this.maxQueues);
      const { id, op } = this.ids.take(name);
      const now = this.clock.now();
      const record: QueueRecord = { name, queueId: id, dataId: id, config, createTime: now, updateTime: now };
      this.creating++;
      try {
        await this.store.commit([{ kind: "putQueue", queue: record }, op]);
      } finally {
        this.creating--;
      }
      const queue = new QueueState(record, undefined, this.departureBound);
      this.byName.set(name, queue);
      return queue;
    });
  }

  /**
   * Changes a queue's configuration and marks it changed now (even if it is
   * the same). Without `fields`, `input` replaces the whole configuration
   * (an unset max_message_bytes keeps a queue's earlier default); with them, only the named fields (or single tags) change, merged into the
   * configuration as it stands when this change is taken, in the queue's
   * chain of admin operations: two updates of different fields or different
   * tags never undo each other.
   */
  async update(
    name: string,
    input: QueueConfigInput | undefined,
    fields?: readonly QueueConfigPath[],
  ): Promise<QueueState> {
    // A whole configuration is checked before the queue is looked up, as it always was.
    const replacement = fields === undefined ? resolveQueueConfig(input) : undefined;
    this.get(name, "name");
    return this.exclusive(name, async () => {
      const queue = this.get(name, "name");
      const current = queue.record.config;
      const requested = mergeQueueConfig(current, input, fields);
      // Before the rest is checked: a FIFO queue's own settings are refused on a standard queue.
      if ((requested.fifo ?? false) !== (current.fifo !== undefined)) {
        throw invalidArgument("config.fifo", "is set when a queue is created and cannot change");
      }
      const config =
        replacement === undefined ? resolveQueueConfig(requested) : keepingEarlierDefaults(replacement, input, current);
      // A policy kept as it was was checked when it was set (and its dead-letter queue cannot be deleted since).
      if (fields === undefined || fields.includes("redrivePolicy")) await this.checkRedrive(name, config);
      const record = { ...queue.record, config, updateTime: this.clock.now() };
      await this.store.commit([{ kind: "putQueue", queue: record }]);
      queue.record = record;
      return queue;
    });
  }

  /** Deletes a queue and its messages. */
  async delete(name: string): Promise<void> {
    this.get(name, "name");
    return this.exclusive(name, async () => {
      const queue = this.get(name, "name");
      const sources = [
        ...this.deadLetterSourcesOf(name),
        ...(await this.cluster.deadLetterSourcesElsewhere(name)),
      ].sort();
      if (sources.length > 0) {
        throw new HoldshelfError(
          "QUEUE_IN_USE",
          `queue "${name}" is the dead-letter queue of ${sources.map((source) => `"${source}"`).join(", ")}; deleting it would lose their failed messages`,
        );
      }
      await this.store.commit([{ kind: "removeQueue", name }]);
      this.byName.delete(name);
      queue.deleted = true;
      queue.clear();
      this.events.onDeleted(queue);
      this.dropInBackground(queue.record.dataId);
    });
  }

  /** Removes every message of a queue by moving it to a new, empty data space. Returns how many were removed. */
  async purge(name: string): Promise<number> {
    this.get(name, "name");
    return this.exclusive(name, async () => {
      const queue = this.get(name, "name");
      const oldDataId = queue.record.dataId;
      const { id, op } = this.ids.take(name);
      const record = { ...queue.record, dataId: id };
      await this.store.commit([{ kind: "putQueue", queue: record }, op]);
      const purged = queue.size;
      queue.clear();
      queue.record = record;
      this.dropInBackground(oldDataId);
      return purged;
    });
  }

  /**
   * Rewrites a queue's message move tasks with `change` (which may throw to
   * refuse), applied to the record current when the write begins: in the
   * queue's chain of admin operations, so an update or purge and a task's
   * progress never write over each other's fields. Returns false, writing
   * nothing, if the queue was deleted or moved away meanwhile (a write would
   * bring its record back).
   */
  async changeMoveTasks(
    queue: QueueState,
    change: (tasks: readonly StoredMoveTask[]) => readonly StoredMoveTask[],
  ): Promise<boolean> {
    const { name } = queue.record;
    return this.exclusive(name, async () => {
      if (queue.deleted || this.byName.get(name) !== queue) return false;
      const record = { ...queue.record, moveTasks: change(queue.record.moveTasks ?? []) };
      await this.store.commit([{ kind: "putQueue", queue: record }]);
      queue.record = record;
      return true;
    });
  }

  /** The queues whose redrive policy names `name` as their dead-letter queue, in name order. */
  deadLetterSourcesOf(name: string): string[] {
    return this.deadLetterSources().get(name) ?? [];
  }

  /** For every dead-letter queue in use, the queues that name it, in name order: one pass over all queues. */
  deadLetterSources(): Map<string, string[]> {
    const sources = new Map<string, string[]>();
    for (const queue of this.byName.values()) {
      const target = queue.record.config.redrivePolicy?.deadLetterQueue;
      if (target !== undefined) sources.set(target, [...(sources.get(target) ?? []), queue.record.name]);
    }
    for (const names of sources.values()) names.sort();
    return sources;
  }

  /** For every dead-letter queue, its sources as queues are described: this broker's, and (cluster mode) the others' as last read. */
  knownDeadLetterSources(): Map<string, string[]> {
    const sources = this.deadLetterSources();
    for (const [target, elsewhere] of this.cluster.knownDeadLetterSourcesElsewhere()) {
      sources.set(target, [...(sources.get(target) ?? []), ...elsewhere].sort());
    }
    return sources;
  }

  /** The queue of that name, if there is one. */
  find(name: string): QueueState | undefined {
    return this.byName.get(name);
  }

  /** A page of queues in name order; with `visible`, only the queues it accepts (pages stay full). */
  list(
    prefix: string,
    pageSize: number,
    pageToken: string,
    visible: (name: string) => boolean = () => true,
  ): { queues: QueueState[]; nextPageToken: string } {
    const size = pageSize || defaultPageSize;
    if (!Number.isInteger(size) || size < 1 || size > maxPageSize) {
      throw invalidArgument("page_size", `must be between 0 and ${maxPageSize}`);
    }
    const after = pageToken === "" ? "" : decodePageToken(pageToken);
    if (after === undefined) throw invalidArgument("page_token", "is not a token this service returned");
    const names = [...this.byName.keys()]
      .filter((name) => name.startsWith(prefix) && name > after && visible(name))
      .sort();
    const page = names.slice(0, size);
    const nextPageToken = names.length > size ? encodePageToken(page[page.length - 1]!) : "";
    return { queues: page.map((name) => this.byName.get(name)!), nextPageToken };
  }

  private async checkRedrive(name: string, config: QueueConfig): Promise<void> {
    const target = config.redrivePolicy?.deadLetterQueue;
    if (target === undefined) return;
    if (target === name) {
      throw invalidArgument("config.redrive_policy.dead_letter_queue", "must be another queue than this one");
    }
    const local = this.byName.get(target);
    const targetFifo = local !== undefined ? local.fifo : await this.cluster.fifoElsewhere(target);
    if (targetFifo === undefined) {
      throw new HoldshelfError("DEAD_LETTER_QUEUE_NOT_FOUND", `dead-letter queue "${target}" does not exist`, {
        violations: [{ field: "config.redrive_policy.dead_letter_queue", description: "must be an existing queue" }],
      });
    }
    if (targetFifo !== (config.fifo !== undefined)) {
      const kind = config.fifo === undefined ? "a standard" : "a FIFO";
      throw invalidArgument("config.redrive_policy.dead_letter_queue", `must be ${kind} queue, as this one is`);
    }
  }

  /**
   * Runs the admin operations on one name one after another. Each writes a
   * whole queue record built from the current one; two at once would write
   * records built from the same stale state, and the last would win on disk
   * (a purge undone by an update, a deleted queue brought back).
   */
  private exclusive<T>(name: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.adminChains.get(name) ?? Promise.resolve();
    const result = previous.then(operation, operation);
    const tail = result.catch(() => undefined);
    this.adminChains.set(name, tail);
    void tail.then(() => {
      if (this.adminChains.get(name) === tail) this.adminChains.delete(name);
    });
    return result;
  }

  // The keys are already unreachable (the record no longer names them) and
  // start-up drops any that a crash leaves, so freeing them need not block.
  private dropInBackground(dataId: number): void {
    this.store.dropData(dataId).catch(() => undefined);
  }
}

/** One counter for every queue: the embedded store's sequence. */
function counterSequence(next: number): IdSequence {
  return {
    take() {
      const id = next++;
      return { id, op: { kind: "putSequence", next } };
    },
  };
}
