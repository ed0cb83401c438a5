import type { ScheduleEntry } from "./store.js";

/**
 * The queues of the cluster that this broker does not serve (cluster mode):
 * what dead-letter moves, redrives and queue checks need across shards. In
 * the embedded mode every queue is this broker's, and this is noneElsewhere.
 * A port storage implements (store/postgres/postgres-cluster-queues.ts) and
 * the rules use, so it lives with storage, as the Store interface does.
 */
export interface ClusterQueues {
  /** Whether a queue of that name exists on another broker's shard. */
  existsElsewhere(name: string): Promise<boolean>;
  /** Whether the queue of that name on another broker's shard is FIFO; undefined if there is none. */
  fifoElsewhere(name: string): Promise<boolean | undefined>;
  /** The queues on other brokers' shards whose redrive policy names `name`, in name order. */
  deadLetterSourcesElsewhere(name: string): Promise<string[]>;
  /** The same for every dead-letter queue, as last read (see refresh): for describing queues. */
  knownDeadLetterSourcesElsewhere(): ReadonlyMap<string, readonly string[]>;
  /** Reads what knownDeadLetterSourcesElsewhere says again. */
  refresh(): Promise<void>;
  /**
   * Resolves once another broker's queue took in messages sent to it (they
   * left its inbox), so that a redrive answers once its messages can be
   * received; or after a few seconds, if nobody serves that queue now.
   */
  takenIn(queue: string, messageIds: readonly string[]): Promise<void>;
}

/** A message that arrived, from another broker, in a queue this broker serves: taken in by Broker.takeArrivals. */
export interface Arrival {
  readonly queue: string;
  /** The data space it was written into: the queue's at the time. */
  readonly dataId: number;
  readonly entry: ScheduleEntry;
}

/** The cluster of one broker: no queue lives anywhere else. */
export const noneElsewhere: ClusterQueues = {
  existsElsewhere: () => Promise.resolve(false),
  fifoElsewhere: () => Promise.resolve(undefined),
  deadLetterSourcesElsewhere: () => Promise.resolve([]),
  knownDeadLetterSourcesElsewhere: () => new Map(),
  refresh: () => Promise.resolve(),
  takenIn: () => Promise.resolve(),
};
