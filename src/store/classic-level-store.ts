import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { BackupEncoder } from "./backup-format.js";
import { checkLevelFormat } from "./format-version.js";
import { GroupCommit, type CommitObserver, type GroupCommitStats } from "./group-commit.js";
import {
  checkpointKey,
  contentKey,
  dataIdOfKey,
  dataRanges,
  dataSpaceFrom,
  dataSpaces,
  deduplicationKey,
  deduplicationKeyText,
  deduplicationRange,
  metaKey,
  readScheduleKeyInto,
  queueKey,
  queueRange,
  scheduleKey,
  scheduleRange,
} from "./key-layout.js";
import { createLevelDatabase, writeLevelBatch, type LevelBatchOp, type LevelDatabase } from "./level-batch.js";
import { ScheduleColumns } from "./schedule-columns.js";
import type { RecoverableStore } from "./recoverable-store.js";
import type { MessageReading, ScheduleEntry, StoredDeduplication, StoredQueue, StoredState, StoreOp } from "./store.js";
import { translateOpenError } from "./store-open-error.js";
import { storageUnavailable } from "./storage-unavailable.js";
import {
  decodeContent,
  decodeDeduplication,
  decodeQueueRecord,
  decodeScheduleValueInto,
  encodeContent,
  encodeDeduplication,
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
  /**
   * Makes the database handle, at open and at every reopen; a plain
   * ClassicLevel if unset. Tests pass one whose writes fail, to inject disk
   * faults where a failing disk shows them (test/support/faulty-level.ts).
   */
  readonly createDatabase?: (dataDir: string) => LevelDatabase;
}

const sequenceKey = metaKey("sequence");
const handleKeyKey = metaKey("handle-key");
// Deleted (never present) to prove a write reaches the log again after a failure.
const probeKey = metaKey("write-probe");
// Entries fetched per iterator round trip when loading at start.
const loadChunk = 1000;
// Entries read per round trip by a backup: LevelDB's thread reads them while the event loop serves calls.
const backupChunk = 1000;

/** The Store on LevelDB through classic-level, with group commit. */
export class ClassicLevelStore implements RecoverableStore {
  private readonly groupCommit: GroupCommit<LevelBatchOp>;
  private readonly sync: boolean;

  private constructor(
    private db: LevelDatabase,
    private readonly dataDir: string,
    private readonly createDatabase: (dataDir: string) => LevelDatabase,
    durability: Durability,
    commitObserver: CommitObserver | undefined,
  ) {
    this.sync = durability === "fsync";
    this.groupCommit = new GroupCommit((ops) => this.writeBatch(ops), commitObserver);
  }

  /**
   * Opens (creating if needed) the store in a data directory, upgrading an
   * older format (format-version.ts). Throws a clear error if it is
   * unusable, in use or in a newer format.
   */
  static async open(options: ClassicLevelStoreOptions): Promise<ClassicLevelStore> {
    const createDatabase = options.createDatabase ?? createLevelDatabase;
    const db = await openLevel(options.dataDir, createDatabase);
    return new ClassicLevelStore(
      db,
      options.dataDir,
      createDatabase,
      options.durability ?? "fsync",
      options.commitObserver,
    );
  }

  /** Writes one batch (see writeLevelBatch for why not the public batch()). */
  private writeBatch(ops: LevelBatchOp[]): Promise<void> {
    // One handler per batch, not per commit: failures become STORAGE_UNAVAILABLE here.
    return writeLevelBatch(this.db, ops, this.sync).catch((error: unknown) => {
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
    this.db = await openLevel(this.dataDir, this.createDatabase);
  }

  /** Writes (durably) one record that changes nothing, to prove writes work again; rejects with STORAGE_UNAVAILABLE if not. */
  probeWrite(): Promise<void> {
    return this.writeBatch([{ type: "del", key: probeKey }]);
  }

  /** Takes commits again once the owner rebuilt its state from a reopened store. */
  resumeWrites(): void {
    this.groupCommit.resume();
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
      const schedule = await this.loadSchedule(record.dataId);
      const deduplications = await this.loadDeduplications(record.dataId);
      // Only queues that have deduplication records (FIFO queues) carry them.
      queues.push(deduplications.length === 0 ? { record, schedule } : { record, schedule, deduplications });
    }
    await this.dropOrphanedData(new Set(queues.map((queue) => queue.record.dataId)));
    return { queues, nextSequence, handleKey };
  }

  commit(ops: readonly StoreOp[], lingerMs = 0): Promise<void> {
    // Encoded now, whole, before anything is queued: callers may change their
    // objects once this returns, and an op that cannot be encoded (an id
    // beyond 32 bits) refuses its whole commit.
    const batch: LevelBatchOp[] = [];
    try {
      for (const op of ops) appendBatchOps(batch, op);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.groupCommit.commit(batch, lingerMs);
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

  /**
   * Every key and value of the database as the backup file's bytes
   * (backup-format.ts), read from the one snapshot LevelDB takes as the
   * iterator opens: every commit that resolved before is in it whole, and
   * none that starts writing after. Commits go on meanwhile; the reads skip
   * LevelDB's block cache, so the copy does not push the hot blocks out.
   */
  async *backup(snapshotTime: number): AsyncGenerator<Buffer> {
    const encoder = new BackupEncoder();
    const iterator = this.db.iterator({ fillCache: false });
    let next: Promise<[Buffer, Buffer][]> | undefined;
    try {
      yield encoder.header(snapshotTime);
      // The next chunk is read (on LevelDB's thread) while this one is encoded and sent.
      next = iterator.nextv(backupChunk);
      for (;;) {
        const entries = await next;
        if (entries.length === 0) break;
        next = iterator.nextv(backupChunk);
        yield encoder.records(entries);
      }
      yield encoder.end();
    } catch (error) {
      // A read of a database being reopened after a failed write fails like that write.
      throw this.unavailable ?? error;
    } finally {
      // A caller that stopped early leaves a read under way, which must end before the close.
      await next?.catch(() => undefined);
      await iterator.close();
    }
  }

  async dropData(dataId: number): Promise<void> {
    for (const range of dataRanges(dataId)) await this.db.clear(range);
  }

  async close(): Promise<void> {
    // Commits already asked for are written first: a barrier starts any that
    // linger (a renewal's) instead of letting their timer find the database
    // closed. One that fails has told its caller; closing goes on.
    await this.groupCommit.commit([]).catch(() => undefined);
    await this.db.close();
  }

  private async loadHandleKey(): Promise<Uint8Array> {
    const existing = await this.db.get(handleKeyKey);
    if (existing !== undefined) return existing;
    const created = randomBytes(32);
    await this.db.put(handleKeyKey, created, { sync: true });
    return created;
  }

  private async loadSchedule(dataId: number): Promise<ScheduleColumns> {
    const schedule = new ScheduleColumns();
    const iterator = this.db.iterator(scheduleRange(dataId));
    let next: Promise<[Buffer, Buffer][]> | undefined;
    try {
      // The next chunk is read (on LevelDB's thread) while this one is decoded.
      next = iterator.nextv(loadChunk);
      for (;;) {
        const entries = await next;
        if (entries.length === 0) break;
        next = iterator.nextv(loadChunk);
        for (const [key, value] of entries) {
          const index = schedule.append();
          readScheduleKeyInto(key, schedule, index);
          decodeScheduleValueInto(value, schedule, index);
        }
      }
    } finally {
      // A decode that threw leaves a read under way, which must end before the close.
      await next?.catch(() => undefined);
      await iterator.close();
    }
    return schedule;
  }

  /** A data space's deduplication records, in key order, expired ones too (the broker skips those). */
  private async loadDeduplications(dataId: number): Promise<StoredDeduplication[]> {
    const records: StoredDeduplication[] = [];
    for await (const [key, value] of this.db.iterator(deduplicationRange(dataId))) {
      records.push(decodeDeduplication(deduplicationKeyText(key), value));
    }
    return records;
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

async function openLevel(dataDir: string, createDatabase: (dataDir: string) => LevelDatabase): Promise<LevelDatabase> {
  const db = createDatabase(dataDir);
  try {
    await mkdir(dataDir, { recursive: true });
    await db.open();
  } catch (error) {
    throw translateOpenError(dataDir, error);
  }
  try {
    // Before anything else reads or writes it: the handle key's creation, a recovery's probe.
    await checkLevelFormat(db, dataDir);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

function appendBatchOps(batch: LevelBatchOp[], op: StoreOp): void {
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
        {
          type: "put",
          key: scheduleKey(op.dataId, op.entry.readyAt, op.entry.id),
          value: encodeScheduleValue(op.entry),
        },
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
    case "putDeduplication":
      batch.push({
        type: "put",
        key: deduplicationKey(op.dataId, op.record.key),
        value: encodeDeduplication(op.record),
      });
      return;
    case "removeDeduplication":
      batch.push({ type: "del", key: deduplicationKey(op.dataId, op.key) });
      return;
    case "putInbound":
      // Only cluster mode has queues on other brokers (src/store/cluster-queues.ts).
      throw new Error("the embedded store has no other brokers to send a message to");
    case "removeMessage":
      batch.push(
        { type: "del", key: contentKey(op.dataId, op.id) },
        { type: "del", key: scheduleKey(op.dataId, op.readyAt, op.id) },
      );
      if (op.hasCheckpoint) batch.push({ type: "del", key: checkpointKey(op.dataId, op.id) });
      return;
  }
}
