import type { Store, StoreOp } from "../store/store.js";
import type { QueueState } from "./queue-state.js";

/**
 * Writes a rule's batch for one queue and resolves once it is durable,
 * serving the queue's waiting receives meanwhile; `lingerMs` as Store.commit.
 */
export type CommitAndServe = (queue: QueueState, ops: StoreOp[], lingerMs?: number) => Promise<void>;

/** The CommitAndServe over `store`; `serve` offers a queue to its waiting receives (Maintenance.advance). */
export function createCommitAndServe(store: Pick<Store, "commit">, serve: (queue: QueueState) => void): CommitAndServe {
  return async (queue, ops, lingerMs) => {
    // Nothing to write (say, a retried Delete of a message already gone from
    // memory) still waits for the batches before it: the removal it reports
    // may be one of them, and must not be answered OK before it is durable.
    const written = store.commit(ops, lingerMs);
    if (ops.length === 0) return written;
    // Released messages and freed in-flight room go to waiting receives at
    // once; their writes queue behind this one, in the order memory changed.
    serve(queue);
    await written;
  };
}
