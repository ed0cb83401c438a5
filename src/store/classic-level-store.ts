import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { ClassicLevel } from "classic-level";
import { GroupCommit, type CommitObserver, type GroupCommitStats } from "./group-commit.js";
import {
  checkpointKey,
  contentKey,
  dataIdOfKey,
  dataRanges,
  dataSpaceFrom,
  dataSpaces,
  metaKey,
  parseScheduleKey,
  queueKey,
  queueRange,
  scheduleKey,
  scheduleRange,
} from "./key-layout.js";
import type { MessageReading, ScheduleEntry, Store, StoredQueue, StoredState, StoreOp } from "./store.js";
import { translateOpenError } from "./store-open-error.js";
import { storageUnavailable } from "./storage-unavailable.js";
import {
  decodeContent,
  decodeQueueRecord,
  decodeScheduleValue,
  encodeContent,
  encodeQueueRecord,
  encodeScheduleValue,
} from "./value-codecs.js";

/**
 * How writes reach the disk. `fsync`: every commit is fsynced before it
 * resolves, surviving a machine crash. `os`: left to the OS page cache,
 * surviving a process crash only.
 */
export type Durability = "fsync" | "os";

/** Options of a ClassicLevelStore. */
export interface ClassicLevelStoreOptions {
  readonly dataDir: string;
  readonly durability?: Durability;
  /** Told of each batch the group commit writes or fails to write. */
  readonly commitObserver?: CommitObserver;
}

type Level = ClassicLevel<Buffer, Buffer>;
type BatchOp = { type: "put"; key: Buffer; value: Buffer } | { type: "del"; key: Buffer };
/** abstract-level's private write contract, which classic-level implements. */
type PrivateBatch = { _batch(ops: BatchOp[], options: { sync: boolean }): Promise<void> };

const sequenceKey = metaKey("sequence");
const handleKeyKey = metaKey("handle-key");
// Deleted (never present) to prove a write reaches the log again after a failure.
const probeKey = metaKey("write-probe");
// Entries fetched per iterator round trip when loading at start.
const loadChunk = 1000;

/** The Store on LevelDB through classic-level, with group commit. */
export class ClassicLevelStore implements Store {
  private readonly groupCommit: GroupCommit<BatchOp>;
  private readonly sync: boolean;
  /** Set by fault-injection tests: every write fails with it, as a failing disk would. */
  private writeFault: Error | undefined;

  private constructor(
    private db: Level,
    private readonly dataDir: string,
    durability: Durability,
    commitObserver: CommitObserver | undefined,
  ) {
    this.sync = durability === "fsync";
    this.groupCommit = new GroupCommit((ops) => this.writeBatch(ops), commitObserver);
  }

  /** Opens (creating if needed) the store in a data directory. Throws a clear error if it is unusable or in use. */
  static async open(options: ClassicLevelStoreOptions): Promise<ClassicLevelStore> {
    const db = await openLevel(options.dataDir);
    return new ClassicLevelStore(db, options.dataDir, options.durability ?? "fsync", options.commitObserver);
  }

  /**
   * Writes one batch straight to classic-level's implementation of
   * abstract-level's private `_batch` contract. The public `batch()` clones
   * every operation and runs its encodings and hooks, about a fifth of the
   * broker's CPU under a batched pipeline; our keys and values are Buffers
   * already, and there are no hooks. Skipping it skips its open check too, so
   * that is made here: the native side must never see a closed database.
   */
  private writeBatch(ops: BatchOp[]): Promise<void> {
    if (this.writeFault !== undefined) return Promise.reject(storageUnavailable(this.writeFault));
    if (this.db.status !== "open") {
      return Promise.reject(storageUnavailable(new Error(`Database is not open: cannot write (status ${this.db.status})`)));
    }
    // One handler per batch, not per commit: failures become STORAGE_UNAVAILABLE here.
    return (this.db as unknown as PrivateBatch)._batch(ops, { sync: this.sync }).catch((error: unknown) => {
      throw storageUnavailable(error);
    });
  }

  /** The STORAGE_UNAVAILABLE error that stopped writing after a failed batch; undefined while writes work. */
  get unavailable(): unknown {
    return this.groupCommit.stoppedBy;
  }

  /**
   * Closes and reopens the database after a failed write: LevelDB may hold a
   * background error, or a torn record at the end of its log, until it is
   * reopened (and a reopen starts a new log). Commits stay refused until
   * `resumeWrites()`.
   */
  async reopen(): Promise<void> {
    await this.db.close().catch(() => undefined);
    this.db = await openLevel(this.dataDir);
  }

  /** Writes (durably) one record that changes nothing, to prove writes work again; rejects with STORAGE_UNAVAILABLE if not. */
  probeWrite(): Promise<void> {
    return this.writeBatch([{ type: "del", key: probeKey }]);
  }

  /** Takes commits again once the owner rebuilt its state from a reopened store. */
  resumeWrites(): void {
    this.groupCommit.resume();
  }

  /** For fault-injection tests: makes every write fail with `fault` (as a failing disk would), or work again with undefined. */
  injectWriteFault(fault: Error | undefined): void {
    this.writeFault = fault;
  }

  /** How many batches (fsyncs) and commits the group commit has written. */
  get commitStats(): GroupCommitStats {
    return this.groupCommit.stats;
  }

  async load(): Promise<StoredState> {
    const handleKey = await this.loadHandleKey();
    const sequenceValue = await this.db.get(sequenceKey);
    const nextSequence = sequenceValue === undefined ? 1 : sequenceValue.readUInt32BE(0);
    const queues: StoredQueue[] = [];
    for await (const value of this.db.values(queueRange())) {
      const record = decodeQueueRecord(value);
      queues.push({ record, schedule: await this.loadSchedule(record.dataId) });
    }
    await this.dropOrphanedData(new Set(queues.map((queue) => queue.record.dataId)));
    return { queues, nextSequence, handleKey };
  }

  commit(ops: readonly StoreOp[]): Promise<void> {
    const batch: BatchOp[] = [];
    for (const op of ops) appendBatchOps(batch, op);
    return this.groupCommit.commit(batch);
  }

  async readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    const keys = messages.map(({ id }) => contentKey(dataId, id));
    const checkpointIndexes: number[] = [];
    messages.forEach(({ id, hasCheckpoint }, index) => {
      if (!hasCheckpoint) return;
      checkpointIndexes.push(index);
      keys.push(checkpointKey(dataId, id));
    });
    // One round trip for bodies and checkpoints alike.
    const values = await this.db.getMany(keys).catch((error: unknown) => {
      // A read of a database being reopened after a failed write fails like that write.
      throw this.unavailable ?? error;
    });
    const checkpoints = new Map(checkpointIndexes.map((index, n) => [index, values[messages.length + n]]));
    return messages.map((_, index) => {
      const value = values[index];
      if (value === undefined) return undefined;
      return { ...decodeContent(value), checkpoint: checkpoints.get(index) };
    });
  }

  async dropData(dataId: number): Promise<void> {
    for (const range of dataRanges(dataId)) await this.db.clear(range);
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private async loadHandleKey(): Promise<Uint8Array> {
    const existing = await this.db.get(handleKeyKey);
    if (existing !== undefined) return existing;
    const created = randomBytes(32);
    await this.db.put(handleKeyKey, created, { sync: true });
    return created;
  }

  private async loadSchedule(dataId: number): Promise<ScheduleEntry[]> {
    const schedule: ScheduleEntry[] = [];
    const iterator = this.db.iterator(scheduleRange(dataId));
    try {
      for (;;) {
        const entries = await iterator.nextv(loadChunk);
        if (entries.length === 0) break;
        for (const [key, value] of entries) {
          const { readyAt, id } = parseScheduleKey(key);
          schedule.push(decodeScheduleValue(id, readyAt, value));
        }
      }
    } finally {
      await iterator.close();
    }
    return schedule;
  }

  /** Frees data spaces left by a purge or delete that a crash interrupted before dropData finished. */
  private async dropOrphanedData(inUse: ReadonlySet<number>): Promise<void> {
    for (const space of dataSpaces) {
      let from = 0;
      for (;;) {
        const [key] = await this.db.keys({ ...dataSpaceFrom(space, from), limit: 1 }).all();
        if (key === undefined) break;
        const dataId = dataIdOfKey(key);
        if (!inUse.has(dataId)) await this.dropData(dataId);
        from = dataId + 1;
      }
    }
  }
}

async function openLevel(dataDir: string): Promise<Level> {
  const db: Level = new ClassicLevel(dataDir, { keyEncoding: "buffer", valueEncoding: "buffer" });
  try {
    await mkdir(dataDir, { recursive: true });
    await db.open();
  } catch (error) {
    throw translateOpenError(dataDir, error);
  }
  return db;
}

function appendBatchOps(batch: BatchOp[], op: StoreOp): void {
  switch (op.kind) {
    case "putQueue":
      batch.push({ type: "put", key: queueKey(op.queue.name), value: encodeQueueRecord(op.queue) });
      return;
    case "removeQueue":
      batch.push({ type: "del", key: queueKey(op.name) });
      return;
    case "putSequence": {
      const value = Buffer.allocUnsafe(4);
      value.writeUInt32BE(op.next, 0);
      batch.push({ type: "put", key: sequenceKey, value });
      return;
    }
    case "putMessage":
      batch.push(
        { type: "put", key: contentKey(op.dataId, op.entry.id), value: encodeContent(op.content) },
        { type: "put", key: scheduleKey(op.dataId, op.entry.readyAt, op.entry.id), value: encodeScheduleValue(op.entry) },
      );
      return;
    case "reschedule":
      if (op.fromReadyAt !== op.entry.readyAt) {
        batch.push({ type: "del", key: scheduleKey(op.dataId, op.fromReadyAt, op.entry.id) });
      }
      batch.push({
        type: "put",
        key: scheduleKey(op.dataId, op.entry.readyAt, op.entry.id),
        value: encodeScheduleValue(op.entry),
      });
      return;
    case "putCheckpoint":
      batch.push({ type: "put", key: checkpointKey(op.dataId, op.id), value: Buffer.from(op.checkpoint) });
      return;
    case "removeMessage":
      batch.push(
        { type: "del", key: contentKey(op.dataId, op.id) },
        { type: "del", key: scheduleKey(op.dataId, op.readyAt, op.id) },
      );
      if (op.hasCheckpoint) batch.push({ type: "del", key: checkpointKey(op.dataId, op.id) });
      return;
  }
}

