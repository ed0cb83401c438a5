import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { HoldshelfError } from "../../errors/holdshelf-error.js";
import { StoreOpenError } from "../store-open-error.js";
import { GroupCommit, type CommitObserver, type GroupCommitStats } from "../group-commit.js";
import type { RecoverableStore } from "../recoverable-store.js";
import type { MessageReading, ScheduleEntry, StoredQueue, StoredState, StoreOp } from "../store.js";
import type { Arrival } from "../../broker/cluster-queues.js";
import { readClusterView, type ClusterView } from "./cluster-view.js";
import { PostgresClusterQueues } from "./postgres-cluster-queues.js";
import { dropDataSpace, dropOrphanedData, loadDeduplications, loadSchedule } from "./postgres-load.js";
import { inboxChannel, takeInbound } from "./postgres-inbox.js";
import { queueMoving } from "./queue-moving.js";
import { planShardMoves } from "./shard-assignment.js";
import { firstK, ShardIds } from "./shard-ids.js";
import { decodeContent, decodeQueueRecord } from "../value-codecs.js";
import { binaryArray } from "./binary-array.js";
import { commitStatement } from "./commit-statement.js";
import { appendChanges, foldChanges, type FoldedBatch, type PostgresChange } from "./postgres-changes.js";
import { ensureCluster } from "./postgres-schema.js";
import { postgresUnavailable } from "./postgres-unavailable.js";
import { connectToPrimary } from "./primary-connection.js";
import { shardOfQueue } from "./shard-of-queue.js";
import { ownershipLost, ShardOwnership, ShardsHeldError, ShardsMovedError } from "./shard-ownership.js";

/** Options of a PostgresStore. */
export interface PostgresStoreOptions {
  /** Connection URLs of the PostgreSQL hosts; the one that takes writes is used, found again after a failover. */
  readonly urls: readonly string[];
  /** This broker's name in the cluster: unique among live brokers, and the same across its restarts. */
  readonly nodeId: string;
  /** Where other brokers and clients reach this one (host:port). */
  readonly advertisedAddress: string;
  /**
   * Which shards this store claims: "all" of them, waiting while another
   * broker holds any (one active broker, others standing by); its "share"
   * of them among the live members, balanced as members come and go (see
   * startBalancing); or "none" (a broker that only routes calls).
   * "all" if unset.
   */
  readonly shards?: "all" | "share" | "none";
  /** Shards of a cluster this store creates; an existing cluster keeps its own. */
  readonly shardCount?: number;
  /** How long a shard lease lasts without renewal (renewed every third of it). */
  readonly leaseTtlMs?: number;
  /** How long `open` waits for shards that live brokers hold; it throws ShardsHeldError after that. */
  readonly claimTimeoutMs?: number;
  /** Told while `open` waits: for shards other brokers hold (a ShardsHeldError), or for PostgreSQL. */
  readonly onWaiting?: (reason: unknown) => void;
  /** Aborts `open` while it waits for shards (a standby told to stop). */
  readonly signal?: AbortSignal;
  /** Told once when this store lost its shards to another broker or could not renew in time: it must stop serving. */
  readonly onOwnershipLost?: (error: unknown) => void;
  readonly commitObserver?: CommitObserver;
}

// Four seconds: a broker whose machine died (no session to close) is taken
// over within about 6 s (the TTL, a standby's 200 ms poll, the load), yet a
// database stall must last over two renewal periods (2.7 s) to cost the shards.
export const defaultLeaseTtlMs = 4000;
const claimRetryMs = 200;
// How often a sharing broker reads who is live and who holds what: it bounds how long a dead
// broker's shards wait once its member lock is gone, and how stale a route can be.
const balanceIntervalMs = 200;
// Every this many balancing steps, the cluster's redrive policies are read again (for describing queues).
const policyRefreshSteps = 5;
// While PostgreSQL cannot be reached at start: often enough to follow a failover, rarely enough not to flood its log.
const openRetryMs = 1000;

/** What a sharing store tells its broker as shards come and go. */
export interface ShardMoves {
  /** Queues of shards this store just claimed and loaded: serve them. */
  gained(queues: StoredQueue[]): void;
  /** These queues' shards go to another broker: stop serving them now (before their last writes drain). */
  releasing(queueNames: string[], error: HoldshelfError): void;
  /** Messages other brokers sent to queues this store serves, now in those queues' data spaces: show them. */
  arrived(arrivals: Arrival[]): void;
}

/** Where calls on one queue go, as a sharing store sees the cluster. */
export type ShardRoute = { readonly kind: "local" } | { readonly kind: "remote"; readonly nodeId: string; readonly address: string } | undefined;

/**
 * The Store on PostgreSQL: every table shared by the brokers of a cluster,
 * each queue in one shard, and this store the single writer of the shards
 * it claimed. Every commit is one statement fenced by its shards' epochs
 * (commit-statement.ts), so a broker whose shards moved on can never write.
 * Brokers share the shards by rendezvous hashing over the live members
 * (shard-assignment.ts); a commit that names a shard this store does not
 * serve is refused with QUEUE_MOVING before it is written.
 */
export class PostgresStore implements RecoverableStore {
  private readonly groupCommit: GroupCommit<PostgresChange>;
  /** Queue name → shard, and data id → shard, of the queues this store knows: a batch is fenced by these. */
  private readonly queueShards = new Map<string, number>();
  private readonly dataShards = new Map<number, number>();
  private renewTimer: NodeJS.Timeout | undefined;
  /** Fires when the leases lapse without a renewal (a hung database), so the broker stops serving without waiting for a commit. */
  private lapseTimer: NodeJS.Timeout | undefined;
  /** When the held leases may have run out by this broker's clock: past it, nothing is written. */
  private leaseValidUntil = 0;
  private lost: unknown;
  private closed = false;
  /** The shards whose queues this store's broker serves: a commit naming any other is refused. */
  private readonly serving = new Set<number>();
  private readonly ids: ShardIds;
  /** The last read of members and owners (a sharing or routing store); routes are answered from it. */
  private view: ClusterView | undefined;
  private moves: ShardMoves | undefined;
  private balanceTimer: NodeJS.Timeout | undefined;
  /** The balancing step under way: shutdown and reopen wait for it. */
  private balancing: Promise<void> = Promise.resolve();
  /** Between a reopen and the broker's reload: balancing waits, since the reload's load takes every shard held. */
  private awaitingReload = false;
  private balanceSteps = 0;
  /** The inbox take under way, and whether another was asked for meanwhile (a notification during a take). */
  private taking: Promise<void> | undefined;
  private takeAgain = false;
  /** The queues of the cluster on other brokers' shards, for moves and checks across shards. */
  readonly clusterQueues = new PostgresClusterQueues(
    () => this.pool,
    (shard) => this.serving.has(shard),
    (queue) => this.shardOf(queue),
  );

  private constructor(
    private pool: pg.Pool,
    private member: pg.Client,
    private ownership: ShardOwnership,
    private readonly shardCount: number,
    private readonly handleKey: Buffer,
    private readonly options: PostgresStoreOptions,
  ) {
    this.groupCommit = new GroupCommit((changes) => this.writeBatch(changes), options.commitObserver);
    this.ids = new ShardIds(shardCount, (name) => this.shardOf(name));
    this.watchMember(member);
  }

  /**
   * The member session holds the member lock: once it is gone, another
   * broker may claim this one's shards at any moment, so this store stops
   * writing at once and (through the owner's storage recovery) reconnects
   * and claims them back if nobody did.
   */
  private watchMember(member: pg.Client): void {
    member.once("end", () => {
      if (this.member === member && !this.closed) this.loseOwnership(postgresUnavailable(new Error("member session ended")));
    });
    // Another broker sent messages to a queue whose shard this store serves: take them in now, not at the next poll.
    member.on("notification", (notification) => {
      if (notification.channel === inboxChannel && this.serving.has(Number(notification.payload))) this.takeInboxSoon();
    });
  }

  /** Ends the pool and the member session; the session's end is expected, not a loss. */
  private async disconnect(): Promise<void> {
    this.member.removeAllListeners("end");
    this.member.removeAllListeners("notification");
    await Promise.all([this.pool.end().catch(() => undefined), this.member.end().catch(() => undefined)]);
  }

  /**
   * Connects, creates the cluster's tables if missing, joins as a member and
   * claims every shard. Until `claimTimeoutMs` passes it waits while other
   * brokers hold the shards, and retries while PostgreSQL cannot be reached
   * or still holds a dead session of this node id: a standby rides out a
   * database failover instead of exiting. A database it must not use (a
   * StoreOpenError: another layout, a bad shard count) fails at once.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const giveUpAt = performance.now() + (options.claimTimeoutMs ?? Infinity);
    for (;;) {
      options.signal?.throwIfAborted();
      try {
        return await PostgresStore.openOnce(options, giveUpAt);
      } catch (error) {
        if (error instanceof StoreOpenError || error instanceof ShardsHeldError || performance.now() >= giveUpAt) throw error;
        options.signal?.throwIfAborted();
        options.onWaiting?.(error);
        await sleep(Math.min(openRetryMs, Math.max(0, giveUpAt - performance.now())), undefined, options.signal && { signal: options.signal });
      }
    }
  }

  private static async openOnce(options: PostgresStoreOptions, giveUpAt: number): Promise<PostgresStore> {
    const leaseTtlMs = options.leaseTtlMs ?? defaultLeaseTtlMs;
    const { pool, member } = await connect(options.urls, options.nodeId, leaseTtlMs);
    try {
      const cluster = await ensureCluster(member, options.shardCount);
      const ownership = new ShardOwnership(member, options.nodeId, leaseTtlMs);
      const store = new PostgresStore(pool, member, ownership, cluster.shardCount, cluster.handleKey, options);
      if (store.mode === "none") return store;
      await ownership.join(options.advertisedAddress);
      try {
        if (store.mode === "all") {
          await store.claimAll(giveUpAt, options.signal);
        } else {
          // A sharing store claims what it can of its share; balancing brings the rest as other brokers hand it over.
          store.keepMembership();
          await store.claimAssigned();
        }
      } catch (error) {
        store.stopTimers();
        await ownership.leave().catch(() => undefined);
        throw error;
      }
      return store;
    } catch (error) {
      await Promise.all([pool.end().catch(() => undefined), member.end().catch(() => undefined)]);
      throw error;
    }
  }

  /** Claims every shard, retrying while live brokers hold some, until `giveUpAt` (performance.now() time). */
  private async claimAll(giveUpAt: number, signal?: AbortSignal): Promise<void> {
    const ttl = this.leaseTtl;
    const shards = Array.from({ length: this.shardCount }, (_, shard) => shard);
    for (;;) {
      signal?.throwIfAborted();
      const started = performance.now();
      try {
        await this.ownership.claim(this.member, shards);
        this.leaseValidUntil = started + ttl;
        this.serving.clear();
        for (const shard of shards) this.serving.add(shard);
        break;
      } catch (error) {
        if (!(error instanceof ShardsHeldError) || performance.now() >= giveUpAt) throw error;
        this.options.onWaiting?.(error);
        // Each attempt is one short transaction, so a standby can afford to ask often: this
        // interval bounds how long a dead broker's queues wait once its member lock is gone.
        await sleep(Math.min(ttl / 3, claimRetryMs, Math.max(0, giveUpAt - performance.now())), undefined, signal && { signal });
      }
    }
    this.scheduleRenewal();
  }

  private stopTimers(): void {
    clearTimeout(this.renewTimer);
    clearTimeout(this.lapseTimer);
  }

  /** A sharing store renews its membership (and later its leases) from the moment it joined. */
  private keepMembership(): void {
    this.leaseValidUntil = performance.now() + this.leaseTtl;
    this.scheduleRenewal();
  }

  private get mode(): "all" | "share" | "none" {
    return this.options.shards ?? "all";
  }

  private get leaseTtl(): number {
    return this.options.leaseTtlMs ?? defaultLeaseTtlMs;
  }

  /** Renews the leases every third of their TTL; a failed renewal is retried at the next tick, until the lease lapses (armLapse). */
  private scheduleRenewal(): void {
    clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.renewOnce(), this.leaseTtl / 3);
    this.renewTimer.unref();
    this.armLapse();
  }

  private armLapse(): void {
    clearTimeout(this.lapseTimer);
    // A millisecond late: a timer may fire a fraction early, and a renewal may have moved the deadline meanwhile.
    this.lapseTimer = setTimeout(() => this.checkLapse(), Math.max(0, this.leaseValidUntil - performance.now()) + 1);
    this.lapseTimer.unref();
  }

  private checkLapse(): void {
    if (this.closed || this.lost !== undefined) return;
    if (performance.now() < this.leaseValidUntil) return this.armLapse();
    this.loseOwnership(ownershipLost());
  }

  private async renewOnce(): Promise<void> {
    if (this.closed || this.lost !== undefined) return;
    const started = performance.now();
    try {
      await this.ownership.renew(this.member);
      this.leaseValidUntil = started + this.leaseTtl;
    } catch (error) {
      if (error instanceof ShardsMovedError) return this.loseOwnership(ownershipLost());
      // The database is unreachable: keep trying; the lapse timer stops the writes once the lease may have passed on.
    }
    this.scheduleRenewal();
  }

  private loseOwnership(error: unknown): void {
    if (this.lost !== undefined) return;
    this.lost = error;
    this.serving.clear();
    this.stopTimers();
    this.options.onOwnershipLost?.(error);
  }

  /** The shards this store owns and serves now: none once it lost them, until it claims them again. */
  get ownedShardCount(): number {
    return this.lost === undefined && !this.closed ? this.serving.size : 0;
  }

  /** How many batches (transactions) and commits the group commit has written. */
  get commitStats(): GroupCommitStats {
    return this.groupCommit.stats;
  }

  /** The STORAGE_UNAVAILABLE error that stopped writing; undefined while writes work. */
  get unavailable(): unknown {
    return this.groupCommit.stoppedBy ?? this.lost;
  }

  /**
   * After a failure: connects again (to whichever host is now the primary),
   * and claims the shards again. A store claiming "all" fails with
   * ShardsHeldError while another broker holds them (it then stands by); a
   * sharing one claims what it can of its share, and balancing brings the
   * rest back. Commits stay refused until `resumeWrites()`.
   */
  async reopen(): Promise<void> {
    this.stopTimers();
    await this.balancing;
    await this.disconnect();
    try {
      const { pool, member } = await connect(this.options.urls, this.options.nodeId, this.leaseTtl);
      this.pool = pool;
      this.member = member;
      this.watchMember(member);
      const { address } = this.ownership;
      this.ownership = new ShardOwnership(member, this.options.nodeId, this.leaseTtl);
      if (this.mode !== "none") await this.ownership.join(address);
      this.closed = false;
      this.awaitingReload = true;
      this.lost = undefined;
      // A sharing store claims what it can of its share now, so the reload that follows serves it at once.
      if (this.mode === "all") await this.claimAll(performance.now());
      else if (this.mode === "share") {
        this.keepMembership();
        await this.claimAssigned();
      }
    } catch (error) {
      const unavailable = postgresUnavailable(error);
      this.lost ??= unavailable;
      throw unavailable;
    }
  }

  /** Records where other brokers and clients reach this one, once the listener knows its port. */
  async advertise(address: string): Promise<void> {
    if (this.mode !== "none") await this.ownership.advertise(address);
    else this.ownership.address = address;
  }

  /** Writes one fenced statement that changes nothing, to prove commits land again. */
  async probeWrite(): Promise<void> {
    await this.writeBatch([]);
  }

  /** Takes commits again once the owner rebuilt its state from a reloaded store. */
  resumeWrites(): void {
    this.awaitingReload = false;
    this.groupCommit.resume();
  }

  /** The queues of every shard held (none yet for a sharing store: balancing brings them), and the cluster's handle key. */
  async load(): Promise<StoredState> {
    this.queueShards.clear();
    this.dataShards.clear();
    this.serving.clear();
    const shards = this.ownership.fence().shards;
    const { queues, nextSequence } = await this.loadShards(shards);
    await dropOrphanedData(this.pool);
    for (const shard of shards) this.serving.add(shard);
    return { queues, nextSequence, ids: this.ids, handleKey: Buffer.from(this.handleKey) };
  }

  /** Reads the queues of `shards` with their deadline indexes, and starts their id sequences. */
  private async loadShards(shards: readonly number[]): Promise<{ queues: StoredQueue[]; nextSequence: number }> {
    const { rows: clusterRows } = await this.pool.query<{ next_sequence: string }>("SELECT next_sequence FROM holdshelf_cluster");
    const nextSequence = Number(clusterRows[0]!.next_sequence);
    const { rows: shardRows } = await this.pool.query<{ shard: number; next_id: string | null }>(
      "SELECT shard, next_id FROM holdshelf_shards WHERE shard = ANY($1::int[])",
      [shards],
    );
    for (const row of shardRows) this.ids.serve(row.shard, row.next_id === null ? firstK(nextSequence, this.shardCount) : Number(row.next_id));
    const { rows } = await this.pool.query<{ shard: number; record: Buffer }>(
      "SELECT shard, record FROM holdshelf_queues WHERE shard = ANY($1::int[]) ORDER BY name",
      [shards],
    );
    const records = rows.map((row) => ({ shard: row.shard, record: decodeQueueRecord(row.record) }));
    const deduplications = await loadDeduplications(this.pool, records.map(({ record }) => record.dataId));
    const queues: StoredQueue[] = [];
    for (const { shard, record } of records) {
      this.queueShards.set(record.name, shard);
      this.dataShards.set(record.dataId, shard);
      const schedule = await loadSchedule(this.pool, record.dataId);
      const ofQueue = deduplications.get(record.dataId);
      // As the other stores: only queues that have deduplication records carry them.
      queues.push(ofQueue === undefined ? { record, schedule } : { record, schedule, deduplications: ofQueue });
    }
    return { queues, nextSequence };
  }

  // ---- Sharing the shards with other brokers ---------------------------

  /**
   * Starts balancing (a sharing or routing store): every 200 ms it reads who
   * is live and who holds what, claims and loads the shards assigned to this
   * broker that nobody live holds, and hands over held shards assigned to
   * another live member. `moves` is how the broker hears of it. Resolves
   * once the first step is done.
   */
  startBalancing(moves: ShardMoves): Promise<void> {
    this.moves = moves;
    const tick = (): void => {
      this.balancing = this.balanceOnce()
        .catch(() => undefined) // a failed step is retried at the next; storage faults reach the broker through commits and renewals
        .finally(() => {
          if (this.moves === undefined) return;
          this.balanceTimer = setTimeout(tick, balanceIntervalMs);
          this.balanceTimer.unref();
        });
    };
    tick();
    // The first step done: a lone broker serves every shard from its first call.
    return this.balancing;
  }

  private async balanceOnce(): Promise<void> {
    if (this.closed || this.moves === undefined) return;
    this.view = await readClusterView(this.member, this.options.nodeId, this.leaseTtl, this.shardCount);
    // A store that lost its shards (storage recovery under way) only routes until it is reopened.
    if (this.mode !== "share" || this.lost !== undefined || this.awaitingReload) return;
    const plan = planShardMoves(this.view, this.options.nodeId, (shard) => this.ownership.holds(shard));
    if (plan.release.length > 0) await this.releaseShards(plan.release);
    if (plan.claim.length > 0) await this.gainShards(plan.claim);
    if (this.balanceSteps++ % policyRefreshSteps === 0) await this.clusterQueues.refresh();
    // The fallback for a notification missed (sent while this store reconnected): a look at the inboxes, lock-free.
    if (this.serving.size > 0) {
      const { rows } = await this.pool.query<{ waiting: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM holdshelf_inbox WHERE shard = ANY($1::int[])) AS waiting",
        [[...this.serving]],
      );
      if (rows[0]!.waiting) this.takeInboxSoon();
    }
  }

  /** Resolves once the inbox take under way (if any) has shown what it took. */
  async inboxTaken(): Promise<void> {
    while (this.taking !== undefined) await this.taking;
  }

  /** Takes the inboxes of the shards served in, once now, and once more if asked again meanwhile. */
  private takeInboxSoon(): void {
    if (this.taking !== undefined) {
      this.takeAgain = true;
      return;
    }
    this.taking = this.takeInboxOnce()
      .catch(() => undefined) // the poll tries again; storage faults reach the broker through commits and renewals
      .finally(() => {
        this.taking = undefined;
        if (this.takeAgain) {
          this.takeAgain = false;
          this.takeInboxSoon();
        }
      });
  }

  private async takeInboxOnce(): Promise<void> {
    if (this.moves === undefined || this.lost !== undefined || this.closed || this.awaitingReload || this.serving.size === 0) return;
    // Commits asked for before land first: the take sees (and the broker's memory agrees on) every data space they moved.
    await this.groupCommit.commit([]);
    const { fenceHeld, arrivals } = await takeInbound(this.pool, this.ownership.fence(this.serving));
    if (!fenceHeld) return this.loseOwnership(ownershipLost());
    if (arrivals.length > 0 && this.lost === undefined) this.moves?.arrived(arrivals);
  }

  /** Claims what it can of its share now (at open and reopen): the load that follows takes them in. */
  private async claimAssigned(): Promise<void> {
    await this.member.query(`LISTEN ${inboxChannel}`);
    this.view = await readClusterView(this.member, this.options.nodeId, this.leaseTtl, this.shardCount);
    const plan = planShardMoves(this.view, this.options.nodeId, (shard) => this.ownership.holds(shard));
    await this.ownership.claimSome(this.member, plan.claim);
  }

  /** Claims what it can of `shards`, loads their queues and hands them to the broker. */
  private async gainShards(shards: readonly number[]): Promise<void> {
    const claimed = await this.ownership.claimSome(this.member, shards);
    if (claimed.length === 0) return;
    // The claim extended nothing else: renewals keep the new leases from here on.
    let loaded;
    try {
      loaded = await this.loadShards(claimed);
    } catch (error) {
      // Claimed but not loaded: writes to these shards would be fenced anyway; start over from storage recovery.
      return this.loseOwnership(postgresUnavailable(error, "read"));
    }
    if (this.lost !== undefined || this.closed) return;
    for (const shard of claimed) this.serving.add(shard);
    this.moves?.gained(loaded.queues);
  }

  /**
   * Hands shards over: the broker stops serving their queues, the writes
   * already asked for land, and only then are the leases given up, so the
   * next owner loads everything this one acknowledged.
   */
  private async releaseShards(shards: readonly number[]): Promise<void> {
    const leaving = new Set(shards);
    for (const shard of shards) this.serving.delete(shard);
    const names = [...this.queueShards].filter(([, shard]) => leaving.has(shard)).map(([name]) => name);
    this.moves?.releasing(names, queueMoving());
    await this.groupCommit.commit([]).catch(() => undefined);
    if (this.lost !== undefined) return;
    await this.ownership.releaseSome(this.member, shards);
    for (const shard of shards) this.ids.forget(shard);
    // The data ids stay mapped to their shards: a late commit to one is refused as moving, never written unfenced.
    for (const name of names) this.queueShards.delete(name);
  }

  /** Where calls on a queue go: here while this store serves its shard, else its live owner's address; undefined while nobody serves it. */
  route(queueName: string): ShardRoute {
    return this.routeShard(this.shardOf(queueName));
  }

  /** Where calls on a shard's queues go (see route). */
  routeShard(shard: number): ShardRoute {
    if (this.serving.has(shard) && this.lost === undefined) return { kind: "local" };
    const owner = this.view?.owners[shard];
    if (owner === undefined || owner === this.options.nodeId) return undefined;
    const address = this.view!.members.get(owner);
    return address === undefined ? undefined : { kind: "remote", nodeId: owner, address };
  }

  /** The other live brokers that hold shards now, node id → address. */
  shardOwners(): Map<string, string> {
    const owners = new Map<string, string>();
    for (const owner of this.view?.owners ?? []) {
      if (owner === undefined || owner === this.options.nodeId) continue;
      const address = this.view!.members.get(owner);
      if (address !== undefined) owners.set(owner, address);
    }
    return owners;
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
   * Refuses (with QUEUE_MOVING) a commit that names a shard this store does
   * not serve: work that was still running on a queue when its shard went to
   * another broker. Refused here, alone, it never reaches a batch, whose
   * fence would fail every commit sharing it.
   */
  private checkServed(changes: readonly PostgresChange[]): void {
    for (const change of changes) {
      // A message bound for another broker's queue goes to that queue's inbox, whatever shard serves it.
      if (change.table === "inbox") continue;
      const shard =
        change.table === "queue" ? this.shardOf(change.name) : change.table === "sequence" ? change.shard : this.dataShards.get(change.dataId);
      if (shard !== undefined && !this.serving.has(shard) && this.lost === undefined) {
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
      text: `SELECT replace(c.id::text, '-', ''), c.content, k.checkpoint FROM holdshelf_content c
             LEFT JOIN holdshelf_checkpoints k ON k.data_id = c.data_id AND k.id = c.id AND k.id = ANY($3::uuid[])
             WHERE c.data_id = $1 AND c.id = ANY($2::uuid[])`,
      values: [dataId, binaryArray("uuid", ids), binaryArray("uuid", checkpointIds)],
      rowMode: "array",
    });
    const found = new Map(rows.map(([id, content, checkpoint]) => [id, { content, checkpoint }]));
    return messages.map(({ id, hasCheckpoint }) => {
      const row = found.get(id);
      if (row === undefined) return undefined;
      return { ...decodeContent(row.content), checkpoint: hasCheckpoint && row.checkpoint !== null ? row.checkpoint : undefined };
    });
  }

  private async readQuery<Row extends unknown[]>(query: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<Row>> {
    try {
      return await this.pool.query<Row>(query);
    } catch (error) {
      throw postgresUnavailable(error, "read");
    }
  }

  // Not fenced: it frees a data space no queue uses (data ids are never
  // reused), which no other broker can be writing to.
  async dropData(dataId: number): Promise<void> {
    await dropDataSpace(this.pool, dataId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Commits already asked for are written first (a barrier starts any that linger).
    await this.groupCommit.commit([]).catch(() => undefined);
    this.closed = true;
    this.moves = undefined;
    clearTimeout(this.balanceTimer);
    await this.balancing;
    await this.taking;
    this.stopTimers();
    // A standby takes the shards at once instead of waiting for their leases.
    if (this.lost === undefined) await this.ownership.release(this.member).catch(() => undefined);
    await this.disconnect();
  }

  /** Writes one group-commit batch as one fenced statement. */
  private async writeBatch(changes: PostgresChange[]): Promise<void> {
    // Refused as a failed write, so a commit on a closed store is seen and logged like one (as LevelDB's is).
    if (this.closed) throw postgresUnavailable(new Error("the store is closed"));
    if (this.mode === "none") {
      // A routing broker holds no queue: only a probe (no changes) comes here.
      if (changes.length > 0) throw queueMoving();
      return;
    }
    if (this.lost !== undefined) throw this.lost;
    if (performance.now() >= this.leaseValidUntil) {
      // Renewals failed for a whole TTL: another broker may own the shards now.
      this.loseOwnership(ownershipLost());
      throw this.lost;
    }
    const batch = foldChanges(changes);
    const shards = this.shardsOf(batch);
    const fence = this.ownership.fence(shards);
    if (shards !== undefined && fence.shards.length < new Set(shards).size) {
      // checkServed refuses these before they are batched: a shard not held here means ownership was lost under us.
      this.loseOwnership(ownershipLost());
      throw this.lost;
    }
    const statement = commitStatement(batch, fence, (name) => this.shardOf(name));
    let fenceHeld: boolean;
    try {
      const { rows } = await this.pool.query<{ ok: boolean }>(statement);
      fenceHeld = rows[0]!.ok;
    } catch (error) {
      throw postgresUnavailable(error);
    }
    if (!fenceHeld) {
      this.loseOwnership(ownershipLost());
      throw this.lost;
    }
    for (const key of batch.queues.put) {
      const shard = this.shardOf(key.name);
      this.queueShards.set(key.name, shard);
      this.dataShards.set(key.dataId, shard);
    }
    for (const key of batch.queues.deleted) this.queueShards.delete(key.name);
  }

  /** The shard of a queue: where it is stored, or where a new one goes. */
  private shardOf(name: string): number {
    return this.queueShards.get(name) ?? shardOfQueue(name, this.shardCount);
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

/**
 * A pool for commits and reads, and a member session (which holds the member
 * lock), on the current primary. Named in pg_stat_activity, so an operator
 * sees which broker holds which connection.
 */
async function connect(urls: readonly string[], nodeId: string, leaseTtlMs: number): Promise<{ pool: pg.Pool; member: pg.Client }> {
  const url = await connectToPrimary(urls);
  // A statement unanswered for a lease's length (a partition, a synchronous
  // standby gone) fails, so the broker stops serving and recovers instead
  // of holding every call; keepalives find a dead server without traffic.
  const settings = { connectionString: url, keepAlive: true, query_timeout: Math.max(leaseTtlMs, 5000) };
  const pool = new pg.Pool({ ...settings, max: 4, application_name: `holdshelf ${nodeId}` });
  // An idle connection's error (the server restarted) surfaces on the next query instead of crashing the process.
  pool.on("error", () => undefined);
  const member = new pg.Client({ ...settings, application_name: `holdshelf member ${nodeId}` });
  member.on("error", () => undefined);
  await member.connect();
  return { pool, member };
}
