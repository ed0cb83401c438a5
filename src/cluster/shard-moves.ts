import type { HoldshelfError } from "../errors/holdshelf-error.js";
import type { Arrival } from "../store/cluster-queues.js";
import type { StoredQueue } from "../store/store.js";

/** What a sharing broker's cluster tells its broker as shards and messages come and go. */
export interface ShardMoves {
  /** Queues of shards this broker just claimed and loaded: serve them. */
  gained(queues: StoredQueue[]): void;
  /** These queues' shards go to another broker: stop serving them now (before their last writes drain). */
  releasing(queueNames: string[], error: HoldshelfError): void;
  /** Messages other brokers sent to queues this broker serves, now in those queues' data spaces: show them. */
  arrived(arrivals: Arrival[]): void;
}
