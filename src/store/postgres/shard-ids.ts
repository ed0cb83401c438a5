import type { IdSequence, StoreOp } from "../store.js";
import { queueMoving } from "./queue-moving.js";

const maxUint32 = 2 ** 32 - 1;

/**
 * Queue and data ids in cluster mode: one sequence per shard, so that brokers
 * owning different shards never hand out the same id, and a shard's sequence
 * moves with the shard. Shard s hands out s, s + N, s + 2N, … (N shards): the
 * k-th id is k × N + s. Each shard's k is stored in its row, written under
 * its fence with the record that uses the id.
 */
export class ShardIds implements IdSequence {
  /** Shard → its next k, for the shards this store serves. */
  private readonly next = new Map<number, number>();

  constructor(
    private readonly shardCount: number,
    private readonly shardOf: (queueName: string) => number,
  ) {}

  /** Starts handing out ids of a shard from its stored k. */
  serve(shard: number, nextK: number): void {
    this.next.set(shard, nextK);
  }

  /** Stops handing out ids of a shard (another broker has it now). */
  forget(shard: number): void {
    this.next.delete(shard);
  }

  take(queueName: string): { id: number; op: StoreOp } {
    const shard = this.shardOf(queueName);
    const k = this.next.get(shard);
    if (k === undefined) throw queueMoving(queueName);
    const id = k * this.shardCount + shard;
    if (id > maxUint32) throw new RangeError(`shard ${shard} has handed out every 32-bit queue id it can`);
    this.next.set(shard, k + 1);
    return { id, op: { kind: "putSequence", next: k + 1, shard } };
  }
}

/**
 * A shard's first k where its row has none yet (a cluster created before
 * shards had sequences): past every id the cluster-wide sequence gave out.
 */
export function firstK(clusterNextSequence: number, shardCount: number): number {
  return Math.ceil(clusterNextSequence / shardCount);
}
