import type { StoreOp } from "../store.js";
import { encodeContent, encodeDeduplication, encodeQueueRecord, encodeScheduleValue } from "../value-codecs.js";

/**
 * One row-level change, encoded when its commit is asked for (callers may
 * change their objects as soon as commit() returns). A value of undefined
 * deletes the row. The rows mirror LevelDB's keys (docs/storage.md): content,
 * the deadline index entry keyed by ready time, and the checkpoint apart, so
 * that a lease change rewrites a small index row and never a body; and a
 * FIFO queue's deduplication records.
 */
export type PostgresChange =
  | {
      readonly table: "queue";
      readonly name: string;
      readonly dataId: number;
      readonly record: Buffer | undefined;
      /** The queue its redrive policy names, "" for none. */
      readonly deadLetterQueue: string;
    }
  /** A message bound for a queue another broker serves, into that queue's inbox (puts only). */
  | {
      readonly table: "inbox";
      readonly queue: string;
      readonly id: string;
      readonly readyAt: number;
      readonly state: Buffer;
      readonly content: Buffer;
    }
  | { readonly table: "sequence"; readonly next: number; readonly shard: number | undefined }
  | { readonly table: "content"; readonly dataId: number; readonly id: string; readonly value: Buffer | undefined }
  | {
      readonly table: "schedule";
      readonly dataId: number;
      readonly readyAt: number;
      readonly id: string;
      readonly value: Buffer | undefined;
    }
  | { readonly table: "checkpoint"; readonly dataId: number; readonly id: string; readonly value: Buffer | undefined }
  | {
      readonly table: "deduplication";
      readonly dataId: number;
      readonly key: string;
      readonly value: Buffer | undefined;
    };

const maxUint32 = 2 ** 32 - 1;

/** Appends the row changes of one op; throws (refusing its whole commit) on an id beyond 32 bits. */
export function appendChanges(changes: PostgresChange[], op: StoreOp): void {
  switch (op.kind) {
    case "putQueue":
      checkUint32(op.queue.dataId, "data id");
      checkUint32(op.queue.queueId, "queue id");
      changes.push({
        table: "queue",
        name: op.queue.name,
        dataId: op.queue.dataId,
        record: encodeQueueRecord(op.queue),
        deadLetterQueue: op.queue.config.redrivePolicy?.deadLetterQueue ?? "",
      });
      return;
    case "removeQueue":
      changes.push({ table: "queue", name: op.name, dataId: 0, record: undefined, deadLetterQueue: "" });
      return;
    case "putSequence":
      checkUint32(op.next, "sequence");
      changes.push({ table: "sequence", next: op.next, shard: op.shard });
      return;
    case "putMessage": {
      checkUint32(op.dataId, "data id");
      const { dataId, entry } = op;
      changes.push(
        { table: "content", dataId, id: entry.id, value: encodeContent(op.content) },
        { table: "schedule", dataId, readyAt: entry.readyAt, id: entry.id, value: encodeScheduleValue(entry) },
      );
      return;
    }
    case "reschedule": {
      checkUint32(op.dataId, "data id");
      const { dataId, entry } = op;
      if (op.fromReadyAt !== entry.readyAt) {
        changes.push({ table: "schedule", dataId, readyAt: op.fromReadyAt, id: entry.id, value: undefined });
      }
      changes.push({
        table: "schedule",
        dataId,
        readyAt: entry.readyAt,
        id: entry.id,
        value: encodeScheduleValue(entry),
      });
      return;
    }
    case "putCheckpoint":
      checkUint32(op.dataId, "data id");
      changes.push({ table: "checkpoint", dataId: op.dataId, id: op.id, value: Buffer.from(op.checkpoint) });
      return;
    case "putDeduplication":
      checkUint32(op.dataId, "data id");
      changes.push({
        table: "deduplication",
        dataId: op.dataId,
        key: op.record.key,
        value: encodeDeduplication(op.record),
      });
      return;
    case "removeDeduplication":
      checkUint32(op.dataId, "data id");
      changes.push({ table: "deduplication", dataId: op.dataId, key: op.key, value: undefined });
      return;
    case "putInbound": {
      const { entry } = op;
      changes.push({
        table: "inbox",
        queue: op.queue,
        id: entry.id,
        readyAt: entry.readyAt,
        state: encodeScheduleValue(entry),
        content: encodeContent(op.content),
      });
      return;
    }
    case "removeMessage": {
      checkUint32(op.dataId, "data id");
      const { dataId, id } = op;
      changes.push(
        { table: "content", dataId, id, value: undefined },
        { table: "schedule", dataId, readyAt: op.readyAt, id, value: undefined },
      );
      if (op.hasCheckpoint) changes.push({ table: "checkpoint", dataId, id, value: undefined });
      return;
    }
  }
}

function checkUint32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > maxUint32) {
    throw new RangeError(`${what} ${value} is not a 32-bit unsigned integer`);
  }
}

/** The rows one batch puts and deletes in one table. */
export interface TableRows<Key> {
  readonly put: Key[];
  readonly putValues: Buffer[];
  readonly deleted: Key[];
}

/** A batch folded to its net effect: the last change of each row wins, as in a LevelDB batch. */
export interface FoldedBatch {
  readonly queues: TableRows<{ name: string; dataId: number; deadLetterQueue: string }>;
  /** Messages bound for other brokers' queues: puts only, each message once. */
  readonly inbox: readonly (PostgresChange & { table: "inbox" })[];
  readonly sequence: number | undefined;
  /** Shard → its sequence's next k (shard-ids.ts), the highest the batch writes. */
  readonly shardSequences: ReadonlyMap<number, number>;
  readonly contents: TableRows<{ dataId: number; id: string }>;
  readonly schedule: TableRows<{ dataId: number; readyAt: number; id: string }>;
  readonly checkpoints: TableRows<{ dataId: number; id: string }>;
  readonly deduplications: TableRows<{ dataId: number; key: string }>;
  /** The data ids and queue names the batch touches: its commit is fenced by their shards. */
  readonly dataIds: ReadonlySet<number>;
  readonly queueNames: ReadonlySet<string>;
}

/**
 * Folds a batch's changes, in order, to one change per row. One statement
 * then writes each table's puts and deletes as sets, which must not name a
 * row twice (PostgreSQL refuses an upsert that meets its own row again), and
 * whose order no longer matters once no row is named twice.
 */
export function foldChanges(changes: readonly PostgresChange[]): FoldedBatch {
  const queues = new Map<string, PostgresChange & { table: "queue" }>();
  const contents = new Map<string, PostgresChange & { table: "content" }>();
  const schedule = new Map<string, PostgresChange & { table: "schedule" }>();
  const checkpoints = new Map<string, PostgresChange & { table: "checkpoint" }>();
  const deduplications = new Map<string, PostgresChange & { table: "deduplication" }>();
  const inbox = new Map<string, PostgresChange & { table: "inbox" }>();
  const dataIds = new Set<number>();
  let sequence: number | undefined;
  const shardSequences = new Map<number, number>();
  for (const change of changes) {
    switch (change.table) {
      case "queue":
        // Delete then set: the latest change moves to the end, keeping put order.
        queues.delete(change.name);
        queues.set(change.name, change);
        break;
      case "sequence":
        if (change.shard === undefined) sequence = change.next;
        else shardSequences.set(change.shard, Math.max(change.next, shardSequences.get(change.shard) ?? 0));
        break;
      case "content":
        dataIds.add(change.dataId);
        contents.set(`${change.dataId}/${change.id}`, change);
        break;
      case "schedule":
        dataIds.add(change.dataId);
        schedule.set(`${change.dataId}/${change.readyAt}/${change.id}`, change);
        break;
      case "checkpoint":
        dataIds.add(change.dataId);
        checkpoints.set(`${change.dataId}/${change.id}`, change);
        break;
      case "deduplication":
        dataIds.add(change.dataId);
        // The data id ends at the first "/": any key after it names one row.
        deduplications.set(`${change.dataId}/${change.key}`, change);
        break;
      case "inbox":
        inbox.set(`${change.queue}/${change.id}`, change);
        break;
    }
  }
  return {
    queues: split(
      queues.values(),
      ({ name, dataId, deadLetterQueue }) => ({ name, dataId, deadLetterQueue }),
      (change) => change.record,
    ),
    inbox: [...inbox.values()],
    sequence,
    shardSequences,
    contents: split(
      contents.values(),
      ({ dataId, id }) => ({ dataId, id }),
      (change) => change.value,
    ),
    schedule: split(
      schedule.values(),
      ({ dataId, readyAt, id }) => ({ dataId, readyAt, id }),
      (change) => change.value,
    ),
    checkpoints: split(
      checkpoints.values(),
      ({ dataId, id }) => ({ dataId, id }),
      (change) => change.value,
    ),
    deduplications: split(
      deduplications.values(),
      ({ dataId, key }) => ({ dataId, key }),
      (change) => change.value,
    ),
    dataIds,
    queueNames: new Set(queues.keys()),
  };
}

function split<Change, Key>(
  changes: Iterable<Change>,
  keyOf: (change: Change) => Key,
  rowValueOf: (change: Change) => Buffer | undefined,
): TableRows<Key> {
  const rows: TableRows<Key> = { put: [], putValues: [], deleted: [] };
  for (const change of changes) {
    const value = rowValueOf(change);
    if (value === undefined) {
      rows.deleted.push(keyOf(change));
    } else {
      rows.put.push(keyOf(change));
      rows.putValues.push(value);
    }
  }
  return rows;
}
