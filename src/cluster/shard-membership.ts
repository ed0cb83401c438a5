import { setTimeout as sleep } from "node:timers/promises";
import type { CommitFence } from "../store/postgres/commit-statement.js";
import { readClusterView, type ClusterView } from "../store/postgres/cluster-view.js";
import { postgresUnavailable } from "../store/postgres/postgres-unavailable.js";
import { connectSessions, endSessions, type PostgresSessions } from "../store/postgres/postgres-sessions.js";
import { inboxChannel } from "../store/postgres/postgres-inbox.js";
import { assignShards, planShardMoves } from "./shard-assignment.js";
import { ShardEventLog, type ShardEventReason } from "./shard-events.js";
import { checkLayout, currentLayout } from "../store/postgres/schema-upgrades.js";
import {
  ownershipLost,
  ShardOwnership,
  ShardsHeldError,
  ShardsMovedError,
  type ShardClaim,
} from "../store/postgres/shard-ownership.js";
import type { StoreMembership } from "../store/postgres/store-membership.js";
import type { Clock, Timer } from "../time/clock.js";
import { leaseClock } from "./lease-clock.js";

/** How a broker takes part in the cluster. */
export interface ShardMembershipOptions {
  /** Connection URLs of the PostgreSQL hosts; the one that takes writes is used, found again after a failover. */
  readonly urls: readonly string[];
  /** This broker's name in the cluster: unique among live brokers, and the same across its restarts. */
  readonly nodeId: string;
  /**
   * Which shards it claims: "all" of them, waiting while another broker
   * holds any (one active broker, others standing by); its "share" of them
   * among the live members, balanced as members come and go
   * (shard-balancer.ts); or "none" (a broker that only routes calls).
   */
  readonly shards: "all" | "share" | "none";
  /** How long a shard lease lasts without renewal (renewed every third of it). */
  readonly leaseTtlMs: number;
  /** Told while a claim of every shard waits for shards other brokers hold (a ShardsHeldError). */
  readonly onWaiting?: (reason: unknown) => void;
  /** Told once when this broker lost its shards to another broker or could not renew in time: it must stop serving. */
  readonly onOwnershipLost?: (error: unknown) => void;
  /** Told when another broker sent messages to a shard this broker serves (the InboxPoller takes its inbox). */
  readonly onInbox?: () => void;
  /** Times the leases and their renewals; leaseClock if unset. Tests pass a fake one. A standby's wait for held shards at open runs on real time. */
  readonly clock?: Clock;
  /** Where shards claimed, released and lost are recorded; a log of its own if unset. */
  readonly events?: ShardEventLog;
}

/** Work that runs on the membership's sessions (balancing): a reconnect waits for it to pause, and leaving stops it. */
export interface MembershipWork {
  /** Resolves once the step under way (if any) is done. */
  paused(): Promise<void>;
  /** Runs no more steps; resolves once the one under way is done. */
  stop(): Promise<void>;
}

const claimRetryMs = 200;

/**
 * This broker's membership of the cluster and its shard leases: joining
 * (the member lock), claiming, renewing every third of the TTL, stopping
 * every write once the leases may have lapsed, and the "lost" signal when
 * another broker claimed the shards or the member session ended. It is the
 * fence PostgresStore writes under, and it tells which shards this broker
 * serves. The SQL is ShardOwnership's (src/store/postgres/).
 */
export class ShardMembership implements StoreMembership {
  private sessions: PostgresSessions;
  private ownership: ShardOwnership;
  private renewTimer: Timer | undefined;
  /** Fires when the leases lapse without a renewal (a hung database), so the broker stops serving without waiting for a commit. */
  private lapseTimer: Timer | undefined;
  /** When the held leases may have run out by this broker's clock: past it, nothing is written. */
  private leaseValidUntil = 0;
  private lostBy: unknown;
  private closed = false;
  /** Between a reconnect and the broker's reload: balancing and the inbox wait, since the reload's load takes every shard held. */
  private awaitingReload = false;
  /** The shards whose queues this broker serves: a commit naming any other is refused. */
  private readonly serving = new Set<number>();
  private readonly work: MembershipWork[] = [];
  private readonly clock: Clock;
  private lastView: ClusterView | undefined;
  /** Shards claimed, released and lost here, for GetClusterStatus, the log and the takeover counter. */
  readonly events: ShardEventLog;

  constructor(
    sessions: PostgresSessions,
    /** The cluster's shard count. */
    readonly shardCount: number,
    private readonly options: ShardMembershipOptions,
    /** Where other brokers and clients reach this one, until `advertise` records another. */
    address: string,
  ) {
    this.sessions = sessions;
    this.ownership = new ShardOwnership(sessions.member, options.nodeId, options.leaseTtlMs);
    this.ownership.address = address;
    this.clock = options.clock ?? leaseClock;
    this.events = options.events ?? new ShardEventLog();
    this.watchMember();
  }

  /** The last read of members and owners; routes are answered from it (cluster-routes.ts). */
  get view(): ClusterView | undefined {
    return this.lastView;
  }

  /** This broker's node id. */
  get nodeId(): string {
    return this.options.nodeId;
  }

  /** Which shards it claims (see ShardMembershipOptions.shards). */
  get mode(): "all" | "share" | "none" {
    return this.options.shards;
  }

  get pool(): PostgresSessions["pool"] {
    return this.sessions.pool;
  }

  get lost(): unknown {
    return this.lostBy;
  }

  /** Whether shards may move now: not closed, not lost, and not waiting for the broker's reload. */
  get settled(): boolean {
    return !this.closed && this.lostBy === undefined && !this.awaitingReload;
  }

  /** Whether the membership has been left (the store closed). */
  get left(): boolean {
    return this.closed;
  }

  /** The shards this broker owns and serves now: none once it lost them, until it claims them again. */
  get ownedShardCount(): number {
    return this.lostBy === undefined && !this.closed ? this.serving.size : 0;
  }

  /** The shards served now, in no order. */
  servedShards(): number[] {
    return [...this.serving];
  }

  /** Lets `work` run on the sessions: reconnecting pauses it, leaving stops it. */
  attach(work: MembershipWork): void {
    this.work.push(work);
  }

  /**
   * The member session holds the member lock: once it is gone, another
   * broker may claim this one's shards at any moment, so this broker stops
   * writing at once and (through the owner's storage recovery) reconnects
   * and claims them back if nobody did.
   */
  private watchMember(): void {
    const { member } = this.sessions;
    member.once("end", () => {
      if (this.sessions.member === member && !this.closed)
        this.loseOwnership(postgresUnavailable(new Error("member session ended")), "storage-failure");
    });
    // Another broker sent messages to a queue whose shard this broker serves: take them in now, not at the next poll.
    member.on("notification", (notification) => {
      if (notification.channel === inboxChannel && this.serving.has(Number(notification.payload)))
        this.options.onInbox?.();
    });
  }

  /** Ends both sessions; the member session's end is expected, not a loss. */
  private async disconnect(): Promise<void> {
    this.sessions.member.removeAllListeners("end");
    this.sessions.member.removeAllListeners("notification");
    await endSessions(this.sessions);
  }

  /**
   * Joins and claims: every shard ("all", waiting while live brokers hold
   * some, until `giveUpAt`, performance.now() time), or what it can of its
   * share now ("share": balancing brings the rest); a routing broker joins
   * nothing. A failed claim leaves the cluster again.
   */
  async join(giveUpAt: number, signal?: AbortSignal): Promise<void> {
    if (this.mode === "none") return;
    await this.ownership.join(this.ownership.address);
    try {
      if (this.mode === "all") await this.claimAll(giveUpAt, signal);
      else await this.claimShare();
    } catch (error) {
      this.stopTimers();
      await this.ownership.leave().catch(() => undefined);
      throw error;
    }
  }

  /** Claims every shard, retrying while live brokers hold some, until `giveUpAt` (performance.now() time). */
  private async claimAll(giveUpAt: number, signal?: AbortSignal): Promise<void> {
    const ttl = this.options.leaseTtlMs;
    const shards = Array.from({ length: this.shardCount }, (_, shard) => shard);
    for (;;) {
      signal?.throwIfAborted();
      const started = this.clock.now();
      try {
        const claims = await this.ownership.claim(this.sessions.member, shards);
        this.recordClaims(claims, "start");
        this.leaseValidUntil = started + ttl;
        this.serve(shards);
        break;
      } catch (error) {
        if (!(error instanceof ShardsHeldError) || performance.now() >= giveUpAt) throw error;
        this.options.onWaiting?.(error);
        // Each attempt is one short transaction, so a standby can afford to ask often: this
        // interval bounds how long a dead broker's queues wait once its member lock is gone.
        await sleep(
          Math.min(ttl / 3, claimRetryMs, Math.max(0, giveUpAt - performance.now())),
          undefined,
          signal && { signal },
        );
      }
    }
    this.scheduleRenewal();
  }

  /** A sharing broker renews its membership (and later its leases) from the moment it joined, and claims what it can of its share. */
  private async claimShare(): Promise<void> {
    this.leaseValidUntil = this.clock.now() + this.options.leaseTtlMs;
    this.scheduleRenewal();
    await this.sessions.member.query(`LISTEN ${inboxChannel}`);
    const view = await this.readView();
    const plan = planShardMoves(view, this.nodeId, (shard) => this.ownership.holds(shard));
    this.recordClaims(await this.ownership.claimSome(this.sessions.member, plan.claim), "balance");
  }

  /** Records claims, one event per previous holder: a free shard's is `freeReason`, another live-then-dead broker's a takeover. */
  private recordClaims(claims: readonly ShardClaim[], freeReason: ShardEventReason): void {
    const byPrevious = new Map<string | null, number[]>();
    for (const { shard, previous } of claims) byPrevious.set(previous, [...(byPrevious.get(previous) ?? []), shard]);
    const time = Date.now();
    for (const [previous, shards] of byPrevious) {
      const reason = previous === null ? freeReason : previous === this.nodeId ? "reclaim" : "takeover";
      this.events.record({ time, kind: "claimed", shards, nodeId: this.nodeId, peer: previous ?? undefined, reason });
    }
  }

  /** Reads who is live and who holds what, for routes and balancing. */
  async readView(): Promise<ClusterView> {
    this.lastView = await readClusterView(this.sessions.member, this.nodeId, this.options.leaseTtlMs, this.shardCount);
    return this.lastView;
  }

  /** Whether this broker holds the shard's lease (claimed, and not released or lost). */
  holds(shard: number): boolean {
    return this.ownership.holds(shard);
  }

  /** Claims whichever of `shards` are claimable now, and returns them; renewals keep their leases from here on. */
  async claimSome(shards: readonly number[]): Promise<number[]> {
    const claims = await this.ownership.claimSome(this.sessions.member, shards);
    this.recordClaims(claims, "balance");
    return claims.map((claim) => claim.shard);
  }

  /**
   * Gives up the leases of `shards`, so the member they are assigned to
   * claims them at once; records a hand-over for those it still held and so
   * released (not one it had lost meanwhile).
   */
  async releaseSome(shards: readonly number[]): Promise<void> {
    const released = await this.ownership.releaseSome(this.sessions.member, shards);
    // Who each goes to: the assignment among the members of the last read, as balancing planned it.
    const members = [...new Set([...(this.lastView?.members.keys() ?? []), this.nodeId])].sort();
    const assigned = assignShards(members, this.shardCount);
    const byPeer = new Map<string | undefined, number[]>();
    for (const shard of released) byPeer.set(assigned[shard], [...(byPeer.get(assigned[shard]) ?? []), shard]);
    const time = Date.now();
    for (const [peer, handed] of byPeer)
      this.events.record({ time, kind: "released", shards: handed, nodeId: this.nodeId, peer, reason: "handover" });
  }

  /** Serves `shards` too (gained and loaded), unless this broker lost its shards or left meanwhile. */
  serveAlso(shards: readonly number[]): boolean {
    if (this.lostBy !== undefined || this.closed) return false;
    for (const shard of shards) this.serving.add(shard);
    return true;
  }

  /** Stops serving `shards` (they are being handed over). */
  serveNoLonger(shards: readonly number[]): void {
    for (const shard of shards) this.serving.delete(shard);
  }

  serve(shards: readonly number[]): void {
    this.serving.clear();
    for (const shard of shards) this.serving.add(shard);
  }

  private stopTimers(): void {
    this.renewTimer?.cancel();
    this.lapseTimer?.cancel();
  }

  /** Renews the leases every third of their TTL; a failed renewal is retried at the next tick, until the lease lapses (armLapse). */
  private scheduleRenewal(): void {
    this.renewTimer?.cancel();
    this.renewTimer = this.clock.setTimer(this.options.leaseTtlMs / 3, () => void this.renewOnce());
    this.armLapse();
  }

  private armLapse(): void {
    this.lapseTimer?.cancel();
    // A millisecond late: a timer may fire a fraction early, and a renewal may have moved the deadline meanwhile.
    this.lapseTimer = this.clock.setTimer(Math.max(0, this.leaseValidUntil - this.clock.now()) + 1, () =>
      this.checkLapse(),
    );
  }

  private checkLapse(): void {
    if (this.closed || this.lostBy !== undefined) return;
    if (this.clock.now() < this.leaseValidUntil) return this.armLapse();
    this.loseOwnership(ownershipLost(), "lease-lapsed");
  }

  /** One renewal of every lease held (and of the membership): what the renewal timer runs. */
  async renewOnce(): Promise<void> {
    if (this.closed || this.lostBy !== undefined) return;
    const started = this.clock.now();
    try {
      await this.ownership.renew(this.sessions.member);
      this.leaseValidUntil = started + this.options.leaseTtlMs;
    } catch (error) {
      if (error instanceof ShardsMovedError) return this.loseOwnership(ownershipLost(), "claimed-by-another");
      // The database is unreachable: keep trying; the lapse timer stops the writes once the lease may have passed on.
    }
    this.scheduleRenewal();
  }

  /** Stops serving and writing, and tells the owner once: the shards may be another broker's now. */
  loseOwnership(error: unknown, reason: ShardEventReason): void {
    if (this.lostBy !== undefined) return;
    this.lostBy = error;
    const shards = [...this.serving].sort((a, b) => a - b);
    this.events.record({ time: Date.now(), kind: "lost", shards, nodeId: this.nodeId, peer: undefined, reason });
    this.serving.clear();
    this.stopTimers();
    this.options.onOwnershipLost?.(error);
  }

  serves(shard: number): boolean {
    return this.serving.has(shard) && this.lostBy === undefined;
  }

  writable(): void {
    if (this.lostBy !== undefined) throw this.lostBy;
    if (this.clock.now() >= this.leaseValidUntil) {
      // Renewals failed for a whole TTL: another broker may own the shards now.
      this.loseOwnership(ownershipLost(), "lease-lapsed");
      throw this.lostBy;
    }
  }

  fence(only?: Iterable<number>): CommitFence {
    return this.ownership.fence(only);
  }

  broken(): unknown {
    this.loseOwnership(ownershipLost(), "storage-failure");
    return this.lostBy;
  }

  async reconnect(): Promise<void> {
    this.stopTimers();
    await Promise.all(this.work.map((work) => work.paused()));
    await this.disconnect();
    try {
      const { address } = this.ownership;
      this.sessions = await connectSessions(this.options.urls, this.nodeId, this.options.leaseTtlMs);
      this.watchMember();
      // A newer release may have upgraded the layout meanwhile (fencing this broker out): stay down, claim nothing.
      await checkLayout(this.sessions.member, currentLayout);
      this.ownership = new ShardOwnership(this.sessions.member, this.nodeId, this.options.leaseTtlMs);
      this.ownership.address = address;
      if (this.mode !== "none") await this.ownership.join(address);
      this.closed = false;
      this.awaitingReload = true;
      this.lostBy = undefined;
      // A sharing broker claims what it can of its share now, so the reload that follows serves it at once.
      if (this.mode === "all") await this.claimAll(performance.now());
      else if (this.mode === "share") await this.claimShare();
    } catch (error) {
      const unavailable = postgresUnavailable(error);
      this.lostBy ??= unavailable;
      throw unavailable;
    }
  }

  resumed(): void {
    this.awaitingReload = false;
  }

  async leave(): Promise<void> {
    this.closed = true;
    // Every intake lets go of the broker before any is awaited: a take that ends
    // during the balancer's last step must not hand arrivals to a closing broker.
    await Promise.all(this.work.map((work) => work.stop()));
    this.stopTimers();
    // A standby takes the shards at once instead of waiting for their leases.
    if (this.lostBy === undefined) {
      const { shards } = this.ownership.fence();
      const released = await this.ownership.release(this.sessions.member).then(
        () => true,
        () => false,
      );
      if (released)
        this.events.record({
          time: Date.now(),
          kind: "released",
          shards,
          nodeId: this.nodeId,
          peer: undefined,
          reason: "shutdown",
        });
    }
    await this.disconnect();
  }

  /** Records where other brokers and clients reach this one, once the listener knows its port. */
  async advertise(address: string): Promise<void> {
    if (this.mode !== "none") await this.ownership.advertise(address);
    else this.ownership.address = address;
  }
}
