import type { Store, StoreOp } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { BackgroundWork } from "./background-work.js";
import type { BrokerEvents } from "./broker-events.js";
import type { Arrival } from "../store/cluster-queues.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { QueueState } from "./queue-state.js";
import { rescheduleOp } from "./store-ops.js";

/** What the arrival rules work on: parts of one load of the broker's memory. */
export interface ArrivalRulesOptions {
  readonly clock: Clock;
  readonly store: Pick<Store, "commit">;
  readonly registry: QueueRegistry;
  readonly background: BackgroundWork;
  /** Offers a queue's new messages to its waiting receives and arms its timer (Maintenance.advance). */
  readonly advance: (queue: QueueState) => void;
  readonly events: Pick<BrokerEvents, "arrived">;
}

/** The rules for messages other brokers moved here (cluster mode). */
export interface ArrivalRules {
  /**
   * Shows messages that other brokers moved into queues this broker serves
   * (dead-letter moves and redrives across shards), already in the store.
   * One whose queue was purged or deleted meanwhile, or that is here
   * already, is left alone.
   */
  take(arrivals: readonly Arrival[]): void;
}

/**
 * Takes in arrivals. A FIFO message numbered by the sending broker's clock
 * (crossShardSequence) may number below messages already here: it arrives
 * last, so it is renumbered after them, here and on disk (a write in the
 * background: the message is stored already), rather than slotted in ahead.
 */
export function createArrivalRules(options: ArrivalRulesOptions): ArrivalRules {
  const { clock, store, registry, background, advance, events } = options;
  return {
    take(arrivals) {
      const now = clock.now();
      const touched = new Map<QueueState, number>();
      const renumbered: StoreOp[] = [];
      for (const { queue: name, dataId, entry } of arrivals) {
        const queue = registry.find(name);
        if (queue === undefined || queue.record.dataId !== dataId || queue.get(entry.id) !== undefined) continue;
        let arrival = entry;
        if (queue.fifo && entry.group !== undefined && (entry.sequence ?? 0) <= queue.lastSequenceNumber) {
          arrival = { ...entry, sequence: queue.nextSequence(now) };
          renumbered.push(rescheduleOp(dataId, entry.readyAt, arrival));
        }
        queue.add(arrival, now);
        touched.set(queue, (touched.get(queue) ?? 0) + 1);
      }
      if (renumbered.length > 0) background.start(store.commit(renumbered));
      for (const [queue, count] of touched) {
        advance(queue);
        events.arrived(queue.record.name, count);
      }
    },
  };
}
