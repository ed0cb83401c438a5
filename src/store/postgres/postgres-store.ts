import type pg from "pg";
import { GroupCommit, type CommitObserver, type GroupCommitStats } from "../group-commit.js";
import type { RecoverableStore } from "../recoverable-store.js";
import type { MessageReading, ScheduleEntry, StoredQueue, StoredState, StoreOp } from "../store.js";
import { decodeContent, decodeQueueRecord } from "../value-codecs.js";
import { binaryArray } from "./binary-array.js";
import { commitStatement } from "./commit-statement.js";
import { appendChanges, foldChanges, type FoldedBatch, type PostgresChange } from "./postgres-changes.js";
import { dropDataSpace, dropOrphanedData, loadDeduplications, loadSchedule } from "./postgres-load.js";
import { postgresUnavailable } from "./postgres-unavailable.js";
import { queueMoving } from "./queue-moving.js";
import { firstK, ShardIds } from "./shard-ids.js";
import { shardOfQueue } from "./shard-of-queue.js";
import type { StoreMembership } from "./store-membership.js";

/** What a PostgresStore is made of besides its membership (src/cluster/shard-cluster.ts opens both). */
export interface PostgresStoreOptions {
  /** The cluster's shard count, as its row says. */
  readonly shardCount: number;
  /** The cluster's receipt-handle key. */
  readonly handleKey: Buffer;
  /** A broker that only routes calls: it holds no queue, and only probes reach storage. */
  readonly routeOnly?: boolean;
  readonly commitObserver?: CommitObserver;
}

/**
 * The Store on PostgreSQL: every table shared by the brokers of a cluster,
 * each queue in one shard, and this store the single writer of the shards
 * its membership holds. Every commit is one statement fenced by its shards'
 * epochs (commit-statement.ts), so a broker whose shards moved on can never
 * write; a commit that names a shard this broker does not serve is refused
 * with QUEUE_MOVING before it is written. Who holds which shard is the
 * membership's business (src/cluster/): this store only asks its fence.
 */
export class PostgresStore implements RecoverableStore {
  private readonly groupCommit: GroupCommit<PostgresChange>;
  /** Queue name → shard, and data id → shard, of the queues this store knows: a batch is fenced by these. */
  private readonly queueShards = new Map<string, number>();
  private readonly dataShards = new Map<number, number>();
  private readonly ids: ShardIds;
  private closed = false;

  constructor(
    private readonly membership: StoreMembership,
    private readonly options: PostgresStoreOptions,
  ) {
    this.groupCommit = new GroupCommit((changes) => this.writeBatch(changes), options.commitObserver);
    this.ids = new ShardIds(options.shardCount, (name) => this.shardOf(name));
  }

  /** How many batches (transactions) and commits the group commit has written. */
  get commitStats(): GroupCommitStats {
    return this.groupCommit.stats;
  }

  /** The STORAGE_UNAVAILABLE error that stopped writing; undefined while writes work. */
  get unavailable(): unknown {
    return this.groupCommit.stoppedBy ?? this.membership.lost;
  }

  /**
   * An attempt to get storage back is a connection to each host and a
   * query: cheap, so made every 200 ms while no host takes writes. A
   * promoted standby is then served within about that of its promotion,
   * instead of after the storage recovery's 2 s backoff for disks.
   */
  readonly maxRecoveryBackoffMs = 200;

  /**
   * After a failure: the membership connects again (to whichever host is now
   * the primary) and claims the shards again: claiming "all", it fails with
   * ShardsHeldError while another broker holds them (it then stands by);
   * sharing, it claims what it can of its share, and balancing brings the
   * rest back. Commits stay refused until `resumeWrites()`.
   */
  async reopen(): Promise<void> {
    await this.membership.reconnect();
    this.closed = false;
  }

  /** Writes one fenced statement that changes nothing, to prove commits land again. */
  async probeWrite(): Promise<void> {
    await this.writeBatch([]);
  }

  /** Takes commits again once the owner rebuilt its state from a reloaded store. */
  resumeWrites(): void {
    this.membership.resumed();
    this.groupCommit.resume();
  }

  /** The queues of every shard held at open (a sharing broker claims its share first; balancing brings the rest), and the cluster's handle key. */
  async load(): Promise<StoredState> {
    this.queueShards.clear();
    this.dataShards.clear();
    this.membership.serve([]);
    const shards = this.membership.fence().shards;
    const { queues, nextSequence } = await this.loadShards(shards);
    await dropOrphanedData(this.membership.pool);
    this.membership.serve(shards);
    return { queues, nextSequence, ids: this.ids, handleKey: Buffer.from(this.options.handleKey) };
  }

  /** Reads the queues of `shards` with their deadline indexes, and starts their id sequences (a load, or shards gained). */
  async loadShards(shards: readonly number[]): Promise<{ queues: StoredQueue[]; nextSequence: number }> {
    const { pool } = this.membership;
    const { rows: clusterRows } = await pool.query<{ next_sequence: string }>(
      "SELECT next_sequence FROM holdshelf_cluster",
    );
    const nextSequence = Number(clusterRows[0]!.next_sequence);
    const { rows: shardRows } = await pool.query<{ shard: number; next_id: string | null }>(
      "SELECT shard, next_id FROM holdshelf_shards WHERE shard = ANY($1::int[])",
      [shards],
    );
    for (const row of shardRows) {
      this.ids.serve(
        row.shard,
        row.next_id === null ? firstK(nextSequence, this.options.shardCount) : Number(row.next_id),
      );
    }
    const { rows } = await pool.query<{ shard: number; record: Buffer }>(
      "SELECT shard, record FROM holdshelf_queues WHERE shard = ANY($1::int[]) ORDER BY name",
      [shards],
    );
    const records = rows.map((row) => ({ shard: row.shard, record: decodeQueueRecord(row.record) }));
    const deduplications = await loadDeduplications(
      pool,
      records.map(({ record }) => record.dataId),
    );
    const queues: StoredQueue[] = [];
    for (const { shard, record } of records) {
      this.queueShards.set(record.name, shard);
      this.dataShards.set(record.dataId, shard);
      const schedule = await loadSchedule(pool, record.dataId);
      const ofQueue = deduplications.get(record.dataId);
      // As the other stores: only queues that have deduplication records carry them.
      queues.push(ofQueue === undefined ? { record, schedule } : { record, schedule, deduplications: ofQueue });
    }
    return { queues, nextSequence };
  }

  /** The names of the queues this store knows in `shards`. */
  queuesIn(shards: readonly number[]): string[] {
    const of = new Set(shards);
    return [...this.queueShards].filter(([, shard]) => of.has(shard)).map(([name]) => name);
  }

  /**
   * Forgets shards handed to another broker: their id sequences, and the
   * queues `names` in them. Their data ids stay mapped to their shards: a
   * late commit to one is refused as moving, never written unfenced.
   */
  forgetShards(shards: readonly number[], names: readonly string[]): void {
    for (const shard of shards) this.ids.forget(shard);
    for (const name of names) this.queueShards.delete(name);
  }

  /** Resolves once the commits already asked for have landed (a barrier starts any that linger); rejects while writes are stopped. */
  drain(): Promise<void> {
    return this.groupCommit.commit([]);
  }

  commit(ops: readonly StoreOp[], lingerMs = 0): Promise<void> {
    // Encoded now, whole: callers may change their objects once this returns,
    // and an op that cannot be stored (an id beyond 32 bits) refuses its whole commit.
    const changes: PostgresChange[] = [];
    try {
      for (const op of ops) appendChanges(changes, op);
      this.checkServed(changes);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.groupCommit.commit(changes, lingerMs);
  }

  /**
   * Refuses (with QUEUE_MOVING) a commit that names a shard this broker does
   * not serve: work that was still running on a queue when its shard went to
   * another broker. Refused here, alone, it never reaches a batch, whose
   * fence would fail every commit sharing it.
   */
  private checkServed(changes: readonly PostgresChange[]): void {
    for (const change of changes) {
      // A message bound for another broker's queue goes to that queue's inbox, whatever shard serves it.
      if (change.table === "inbox") continue;
      const shard =
        change.table === "queue"
          ? this.shardOf(change.name)
          : change.table === "sequence"
            ? change.shard
            : this.dataShards.get(change.dataId);
      if (shard !== undefined && !this.membership.serves(shard) && this.membership.lost === undefined) {
        throw queueMoving(change.table === "queue" ? change.name : undefined);
      }
    }
  }

  async readMessages(
    dataId: number,
    messages: readonly Pick<ScheduleEntry, "id" | "hasCheckpoint">[],
  ): Promise<(MessageReading | undefined)[]> {
    const ids = messages.map((message) => message.id);
    const checkpointIds = messages.filter((message) => message.hasCheckpoint).map((message) => message.id);
    // A read cut off by a lost connection fails as storage does, never as an unexpected error.
    const { rows } = await this.readQuery<[string, Buffer, Buffer | null]>({
      name: "holdshelf-read-messages",
      // Each body looked up by its whole key, whatever the statistics say (commit-statement.ts: "Why a lookup per key").
      text: `SELECT replace(wanted.id::text, '-', ''), c.content, k.checkpoint FROM unnest($2::uuid[]) AS wanted(id),
             LATERAL (SELECT content FROM holdshelf_content WHERE data_id = $1 AND id = wanted.id OFFSET 0) AS c
             LEFT JOIN LATERAL (SELECT checkpoint FROM holdshelf_checkpoints
               WHERE data_id = $1 AND id = wanted.id AND wanted.id = ANY($3::uuid[]) OFFSET 0) AS k ON true`,
      values: [dataId, binaryArray("uuid", ids), binaryArray("uuid", checkpointIds)],
      rowMode: "array",
    });
    const found = new Map(rows.map(([id, content, checkpoint]) => [id, { content, checkpoint }]));
    return messages.map(({ id, hasCheckpoint }) => {
      const row = found.get(id);
      if (row === undefined) return undefined;
      return {
        ...decodeContent(row.content),
        checkpoint: hasCheckpoint && row.checkpoint !== null ? row.checkpoint : undefined,
      };
    });
  }

  private async readQuery<Row extends unknown[]>(query: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<Row>> {
    try {
      return await this.membership.pool.query<Row>(query);
    } catch (error) {
      throw postgresUnavailable(error, "read");
    }
  }

  // Not fenced: it frees a data space no queue uses (data ids are never
  // reused), which no other broker can be writing to.
  async dropData(dataId: number): Promise<void> {
    await dropDataSpace(this.membership.pool, dataId);
  }

  /** Lands the commits already asked for, then leaves the cluster: a standby takes the shards at once instead of waiting for their leases. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.drain().catch(() => undefined);
    this.closed = true;
    await this.membership.leave();
  }

  /** Writes one group-commit batch as one fenced statement. */
  private async writeBatch(changes: PostgresChange[]): Promise<void> {
    // Refused as a failed write, so a commit on a closed store is seen and logged like one (as LevelDB's is).
    if (this.closed) throw postgresUnavailable(new Error("the store is closed"));
    if (this.options.routeOnly === true) {
      // A routing broker holds no queue: only a probe (no changes) comes here.
      if (changes.length > 0) throw queueMoving();
      return;
    }
    this.membership.writable();
    const batch = foldChanges(changes);
    const shards = this.shardsOf(batch);
    const fence = this.membership.fence(shards);
    // checkServed refuses these before they are batched: a shard not held here means ownership was lost under us.
    if (shards !== undefined && fence.shards.length < new Set(shards).size) throw this.membership.broken();
    const statement = commitStatement(batch, fence, (name) => this.shardOf(name));
    let fenceHeld: boolean;
    try {
      const { rows } = await this.membership.pool.query<{ ok: boolean }>(statement);
      fenceHeld = rows[0]!.ok;
    } catch (error) {
      throw postgresUnavailable(error);
    }
    if (!fenceHeld) throw this.membership.broken();
    for (const key of batch.queues.put) {
      const shard = this.shardOf(key.name);
      this.queueShards.set(key.name, shard);
      this.dataShards.set(key.dataId, shard);
    }
    for (const key of batch.queues.deleted) this.queueShards.delete(key.name);
  }

  /** The shard of a queue: where it is stored, or where a new one goes. */
  shardOf(name: string): number {
    return this.queueShards.get(name) ?? shardOfQueue(name, this.options.shardCount);
  }

  /**
   * The shards a batch writes to. A write to a data space of no queue this
   * store knows (never the broker's) is fenced by every shard held; so is a
   * batch that touches no queue at all (the sequence, or a probe).
   */
  private shardsOf(batch: FoldedBatch): number[] | undefined {
    const shards = new Set<number>();
    for (const name of batch.queueNames) shards.add(this.shardOf(name));
    for (const dataId of batch.dataIds) {
      const shard = this.dataShards.get(dataId);
      if (shard === undefined) return undefined;
      shards.add(shard);
    }
    for (const shard of batch.shardSequences.keys()) shards.add(shard);
    return batch.sequence !== undefined || shards.size === 0 ? undefined : [...shards];
  }
}
