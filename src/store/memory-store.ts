import { randomBytes } from "node:crypto";
import { GroupCommit, type GroupCommitStats } from "./group-commit.js";
import { storedQueueRecord } from "./queue-record.js";
import { ScheduleColumns } from "./schedule-columns.js";
import { storageUnavailable } from "./storage-unavailable.js";
import type {
  MessageContent,
  MessageReading,
  QueueRecord,
  ScheduleEntry,
  Store,
  StoredDeduplication,
  StoredQueue,
  StoredState,
  StoreOp,
} from "./store.js";

/** One data space: the messages of one queue (or of a queue before its purge, until dropped). */
interface DataSpace {
  readonly contents: Map<string, MessageContent>;
  /** Index entries by ready time and id, as the durable store keys them: a failed write can leave a message two. */
  readonly schedule: Map<string, ScheduleEntry>;
  readonly checkpoints: Map<string, Uint8Array>;
  /** A FIFO queue's deduplication records, by key. */
  readonly deduplications: Map<string, StoredDeduplication>;
}

/**
 * What a MemoryStore holds. It outlives the store as a data directory
 * outlives a process: a new MemoryStore on the same contents is a restart.
 */
export interface MemoryContents {
  /** By queue name. */
  readonly queues: Map<string, QueueRecord>;
  /** By data id. */
  readonly spaces: Map<number, DataSpace>;
  nextSequence: number;
  handleKey: Uint8Array | undefined;
}

/** Contents with nothing stored, as an empty data directory. */
export function emptyMemoryContents(): MemoryContents {
  return { queues: new Map(), spaces: new Map(), nextSequence: 1, handleKey: undefined };
}

/**
 * A Store in memory, for rule tests that need no disk. It behaves as the
 * durable one does (the contract suite runs on both): ops are copied when
 * commit() is called and written whole, in call order, by the same group
 * commit a turn later; load() and reads hand out copies, since the broker
 * turns loaded entries into its live messages. It never lingers (see
 * Store.commit): with no fsync to share, waiting would only slow the tests.
 */
export class MemoryStore implements Store {
  private readonly groupCommit = new GroupCommit<StoreOp>((ops) => this.write(ops));
  private closed = false;

  constructor(readonly contents: MemoryContents = emptyMemoryContents()) {}

  /** How many batches and commits the group commit has written, as ClassicLevelStore counts them. */
  get commitStats(): GroupCommitStats {
    return this.groupCommit.stats;
  }

  load(): Promise<StoredState> {
    if (this.closed) return Promise.reject(closedError("load"));
    const { contents } = this;
    contents.handleKey ??= randomBytes(32);
    const records = [...contents.queues.values()].sort((a, b) =>
      Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)),
    );
    const inUse = new Set(records.map((record) => record.dataId));
    for (const dataId of contents.spaces.keys()) if (!inUse.has(dataId)) contents.spaces.delete(dataId);
    const queues: StoredQueue[] = records.map((record) => {
      const queue = { record: storedQueueRecord(record), schedule: this.scheduleOf(record.dataId) };
      const deduplications = [...(contents.spaces.get(record.dataId)?.deduplications.values() ?? [])].map(
        copyDeduplication,
      );
      // As the durable store: only queues that have deduplication records carry them.
      return deduplications.length === 0 ? queue : { ...queue, deduplications };
    });
    return Promise.resolve({ queues, nextSequence: contents.nextSequence, handleKey: Buffer.from(contents.handleKey) });
  }

  commit(ops: readonly StoreOp[]): Promise<void> {
    // Copied now, whole, before anything is queued: callers may change their
    // objects once this returns, and an op that cannot be stored refuses its whole commit.
    let copies: StoreOp[];
    try {
      copies = ops.map(copyOp);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.groupCommit.commit(copies);
  }

  readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    if (this.closed) return Promise.reject(closedError("read"));
    const space = this.contents.spaces.get(dataId);
    return Promise.resolve(
      messages.map(({ id, hasCheckpoint }) => {
        const content = space?.contents.get(id);
        if (content === undefined) return undefined;
        const checkpoint = hasCheckpoint ? space?.checkpoints.get(id) : undefined;
        return { ...copyContent(content), checkpoint: checkpoint && Buffer.from(checkpoint) };
      }),
    );
  }

  dropData(dataId: number): Promise<void> {
    if (this.closed) return Promise.reject(closedError("drop data"));
    this.contents.spaces.delete(dataId);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private write(ops: StoreOp[]): Promise<void> {
    // As the durable store: a batch that reaches a closed store fails whole, as STORAGE_UNAVAILABLE.
    if (this.closed) return Promise.reject(storageUnavailable(closedError("write")));
    for (const op of ops) this.apply(op);
    return Promise.resolve();
  }

  private apply(op: StoreOp): void {
    const { contents } = this;
    switch (op.kind) {
      case "putQueue":
        contents.queues.set(op.queue.name, op.queue);
        return;
      case "removeQueue":
        contents.queues.delete(op.name);
        return;
      case "putSequence":
        contents.nextSequence = op.next;
        return;
      case "putMessage": {
        const space = this.spaceOf(op.dataId);
        space.contents.set(op.entry.id, op.content);
        space.schedule.set(scheduleKey(op.entry.readyAt, op.entry.id), op.entry);
        return;
      }
      case "reschedule": {
        const { schedule } = this.spaceOf(op.dataId);
        if (op.fromReadyAt !== op.entry.readyAt) schedule.delete(scheduleKey(op.fromReadyAt, op.entry.id));
        schedule.set(scheduleKey(op.entry.readyAt, op.entry.id), op.entry);
        return;
      }
      case "putCheckpoint":
        this.spaceOf(op.dataId).checkpoints.set(op.id, op.checkpoint);
        return;
      case "putDeduplication":
        this.spaceOf(op.dataId).deduplications.set(op.record.key, op.record);
        return;
      case "removeDeduplication":
        this.spaceOf(op.dataId).deduplications.delete(op.key);
        return;
      case "putInbound":
        // copyOp refused it before any op of its commit applied.
        return;
      case "removeMessage": {
        const space = this.spaceOf(op.dataId);
        space.contents.delete(op.id);
        space.schedule.delete(scheduleKey(op.readyAt, op.id));
        if (op.hasCheckpoint) space.checkpoints.delete(op.id);
        return;
      }
    }
  }

  private spaceOf(dataId: number): DataSpace {
    let space = this.contents.spaces.get(dataId);
    if (space === undefined) {
      space = { contents: new Map(), schedule: new Map(), checkpoints: new Map(), deduplications: new Map() };
      this.contents.spaces.set(dataId, space);
    }
    return space;
  }

  private scheduleOf(dataId: number): ScheduleColumns {
    const entries = [...(this.contents.spaces.get(dataId)?.schedule.values() ?? [])];
    return ScheduleColumns.of(
      entries.sort((a, b) => a.readyAt - b.readyAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    );
  }
}

function closedError(what: string): Error {
  return new Error(`Store is closed: cannot ${what}`);
}

function scheduleKey(readyAt: number, id: string): string {
  return `${readyAt}/${id}`;
}

/** A copy of an op, refusing what the durable store cannot store either. */
function copyOp(op: StoreOp): StoreOp {
  switch (op.kind) {
    case "putQueue":
      checkUint32(op.queue.queueId, "queue id");
      checkUint32(op.queue.dataId, "data id");
      return { kind: "putQueue", queue: storedQueueRecord(op.queue) };
    case "removeQueue":
      return { kind: "removeQueue", name: op.name };
    case "putSequence":
      checkUint32(op.next, "sequence");
      return { kind: "putSequence", next: op.next };
    case "putMessage":
      checkUint32(op.dataId, "data id");
      return { kind: "putMessage", dataId: op.dataId, entry: copyEntry(op.entry), content: copyContent(op.content) };
    case "reschedule":
      checkUint32(op.dataId, "data id");
      checkReadyAt(op.fromReadyAt);
      return { kind: "reschedule", dataId: op.dataId, fromReadyAt: op.fromReadyAt, entry: copyEntry(op.entry) };
    case "putCheckpoint":
      checkUint32(op.dataId, "data id");
      return { kind: "putCheckpoint", dataId: op.dataId, id: op.id, checkpoint: Buffer.from(op.checkpoint) };
    case "putDeduplication":
      checkUint32(op.dataId, "data id");
      checkMessageId(op.record.messageId);
      return { kind: "putDeduplication", dataId: op.dataId, record: copyDeduplication(op.record) };
    case "removeDeduplication":
      checkUint32(op.dataId, "data id");
      return { kind: "removeDeduplication", dataId: op.dataId, key: op.key };
    case "putInbound":
      throw new Error("the memory store has no other brokers to send a message to");
    case "removeMessage":
      checkUint32(op.dataId, "data id");
      checkReadyAt(op.readyAt);
      return { ...op };
  }
}

/** The entry's own fields only: callers pass live messages, which carry their slot in the broker's table too. */
function copyEntry(entry: ScheduleEntry): ScheduleEntry {
  checkReadyAt(entry.readyAt);
  const copy = {
    id: entry.id,
    readyAt: entry.readyAt,
    leased: entry.leased,
    receiveCount: entry.receiveCount,
    epoch: entry.epoch,
    sendTime: entry.sendTime,
    enqueuedAt: entry.enqueuedAt,
    firstReceiveAt: entry.firstReceiveAt,
    leaseStart: entry.leaseStart,
    size: entry.size,
    hasCheckpoint: entry.hasCheckpoint,
  };
  // A FIFO queue's message only: a standard one's copy has no keys for them.
  const { group, sequence } = entry;
  return group === undefined ? copy : { ...copy, group, sequence };
}

function copyContent(content: MessageContent): MessageContent {
  // Spread defines own properties: an attribute named "__proto__" stays an attribute.
  const copy = {
    body: Buffer.from(content.body),
    attributes: { ...content.attributes },
    typedAttributes: Object.fromEntries(
      Object.entries(content.typedAttributes).map(([name, { dataType, value }]) => [
        name,
        { dataType, value: typeof value === "string" ? value : Buffer.from(value) },
      ]),
    ),
  };
  const { deadLetter, deduplicationId, traceHeader } = content;
  return {
    ...copy,
    ...(deadLetter === undefined
      ? {}
      : { deadLetter: { sourceQueue: deadLetter.sourceQueue, reason: deadLetter.reason } }),
    ...(deduplicationId === undefined ? {} : { deduplicationId }),
    ...(traceHeader === undefined ? {} : { traceHeader }),
  };
}

function copyDeduplication(record: StoredDeduplication): StoredDeduplication {
  return { key: record.key, messageId: record.messageId, sequence: record.sequence, expiresAt: record.expiresAt };
}

function checkUint32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw new RangeError(`${what} ${value} is not a 32-bit unsigned integer`);
}

function checkMessageId(id: string): void {
  // The durable stores keep message ids as 16 bytes.
  if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`message id ${JSON.stringify(id)} is not 32 lowercase hex digits`);
}

function checkReadyAt(value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`ready time ${value} is not a non-negative integer`);
}
