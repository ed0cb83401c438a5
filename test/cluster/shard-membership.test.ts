// Membership and balancing on their own, as River's driver suite has its
// leader file: ShardMembership and ShardBalancer driven directly against a
// real PostgreSQL, their timers on a fake clock, with no broker or gRPC.
// Claims, renewals that keep the leases, a lapse when renewals hang, the
// "lost" signal when another member claimed the shards, and balancing steps
// that move shards towards the assignment as members join, leave and die.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ClusterRoutes } from "../../src/cluster/cluster-routes.js";
import { InboxPoller } from "../../src/cluster/inbox-poller.js";
import { ShardBalancer } from "../../src/cluster/shard-balancer.js";
import { ShardMembership, type ShardMembershipOptions } from "../../src/cluster/shard-membership.js";
import type { ShardMoves } from "../../src/cluster/shard-moves.js";
import type { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { PostgresClusterQueues } from "../../src/store/postgres/postgres-cluster-queues.js";
import { ensureCluster } from "../../src/store/postgres/postgres-schema.js";
import { connectSessions, endSessions } from "../../src/store/postgres/postgres-sessions.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { assignShards } from "../../src/cluster/shard-assignment.js";
import { shardOfQueue } from "../../src/store/postgres/shard-of-queue.js";
import { ShardsHeldError } from "../../src/store/postgres/shard-ownership.js";
import { isStorageUnavailable } from "../../src/store/storage-unavailable.js";
import { FakeClock } from "../support/fake-clock.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { putMessage, queueRecord, scheduleEntry, t0 } from "../store/store-fixtures.js";

const postgres = postgresForFile();
const shardCount = 8;
// Long enough that no lease runs out in real time during a test: only the fake clock lapses them.
const leaseTtlMs = 60_000;

/** One member, wired as ShardCluster.open wires it, with what it told its broker. */
interface Member {
  readonly membership: ShardMembership;
  readonly store: PostgresStore;
  readonly balancer: ShardBalancer;
  readonly routes: ClusterRoutes;
  readonly clock: FakeClock;
  /** What onOwnershipLost was told. */
  readonly lost: unknown[];
  /** Queue names gained and released through the balancer's moves. */
  readonly gained: string[];
  readonly released: string[];
  readonly moves: ShardMoves;
}

describe.skipIf(skipWithoutPostgres)("shard membership and balancing", () => {
  let url: string;
  let admin: pg.Client;
  const members: Member[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(members.splice(0).map((member) => member.store.close().catch(() => undefined)));
    await admin.end();
  });

  async function join(nodeId: string, shards: ShardMembershipOptions["shards"]): Promise<Member> {
    const clock = new FakeClock();
    const lost: unknown[] = [];
    const sessions = await connectSessions([url], nodeId, leaseTtlMs);
    const layout = await ensureCluster(sessions.member, shardCount);
    const membership = new ShardMembership(
      sessions,
      layout.shardCount,
      { urls: [url], nodeId, shards, leaseTtlMs, clock, onOwnershipLost: (error) => lost.push(error) },
      `${nodeId}:1`,
    );
    const store = new PostgresStore(membership, {
      shardCount: layout.shardCount,
      handleKey: layout.handleKey,
      routeOnly: shards === "none",
    });
    const inbox = new InboxPoller(membership, store);
    const clusterQueues = new PostgresClusterQueues(
      () => membership.pool,
      (shard) => membership.serves(shard),
      (queue) => store.shardOf(queue),
    );
    const balancer = new ShardBalancer({ membership, store, inbox, clusterQueues, clock });
    membership.attach(balancer);
    membership.attach(inbox);
    // Claiming gives up at once: a test that wants a member to wait says so by expecting the refusal.
    await membership.join(performance.now()).catch(async (error: unknown) => {
      await endSessions(sessions);
      throw error;
    });
    const gained: string[] = [];
    const released: string[] = [];
    const moves: ShardMoves = {
      gained: (queues) => gained.push(...queues.map((queue) => queue.record.name)),
      releasing: (names: string[], _error: HoldshelfError) => released.push(...names),
      arrived: () => undefined,
    };
    const member = {
      membership,
      store,
      balancer,
      routes: new ClusterRoutes(membership, store),
      clock,
      lost,
      gained,
      released,
      moves,
    };
    members.push(member);
    // As Broker.open does: the load serves what the join claimed.
    await store.load();
    return member;
  }

  /** The shards each member holds in the database. */
  async function holders(): Promise<Map<string, number[]>> {
    const { rows } = await admin.query<{ shard: number; owner: string | null }>(
      "SELECT shard, owner FROM holdshelf_shards ORDER BY shard",
    );
    const held = new Map<string, number[]>();
    for (const row of rows) if (row.owner !== null) held.set(row.owner, [...(held.get(row.owner) ?? []), row.shard]);
    return held;
  }

  /** The shards the assignment gives `nodeId` among `memberIds`. */
  function assignedTo(memberIds: string[], nodeId: string): number[] {
    return assignShards([...memberIds].sort(), shardCount).flatMap((owner, shard) => (owner === nodeId ? [shard] : []));
  }

  /** A queue name whose shard is one of `shards`. */
  function queueIn(shards: readonly number[]): string {
    for (let i = 0; ; i++) if (shards.includes(shardOfQueue(`q${i}`, shardCount))) return `q${i}`;
  }

  /** Two balancing steps of each member in turn: a shard one releases, another claims at its next step. */
  async function balance(...stepping: Member[]): Promise<void> {
    for (let round = 0; round < 2; round++) for (const member of stepping) await member.balancer.step();
  }

  const expiresAt = async (): Promise<number[]> =>
    (await admin.query<{ expires_at: Date }>("SELECT expires_at FROM holdshelf_shards ORDER BY shard")).rows.map(
      (row) => row.expires_at.getTime(),
    );

  it("claims every shard for a member claiming all, and makes a second one wait naming the holder", async () => {
    const a = await join("a", "all");
    expect(a.membership.ownedShardCount).toBe(shardCount);
    expect(await holders()).toEqual(new Map([["a", [0, 1, 2, 3, 4, 5, 6, 7]]]));
    const refused = await join("b", "all").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ShardsHeldError);
    expect(new Set((refused as ShardsHeldError).holders.map((holder) => holder.owner))).toEqual(new Set(["a"]));
  });

  it("renews on its clock's schedule, and a renewal carries the leases a TTL past its start", async () => {
    const a = await join("a", "all");
    const before = await expiresAt();
    // A third of the TTL: the renewal timer fires and extends every lease in the database.
    a.clock.advance(leaseTtlMs / 3);
    await vi.waitFor(async () => expect((await expiresAt())[0]).toBeGreaterThan(before[0]!), {
      timeout: 5000,
      interval: 20,
    });
    // Past the first lease's end by this broker's clock: still writable, thanks to the renewal.
    a.clock.advance(leaseTtlMs - leaseTtlMs / 3 + 1000);
    expect(() => a.membership.writable()).not.toThrow();
    expect(a.lost).toEqual([]);
    expect(a.membership.ownedShardCount).toBe(shardCount);
    await a.store.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
  });

  it("stops writing once its clock passes the lease while its renewals hang, and is told once", async () => {
    const a = await join("a", "all");
    await a.store.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    // A database that answers nothing: the renewals wait on these row locks.
    await admin.query("BEGIN");
    await admin.query("SELECT shard FROM holdshelf_shards FOR UPDATE");
    try {
      a.clock.advance(leaseTtlMs / 3);
      expect(a.lost).toEqual([]);
      a.clock.advance(leaseTtlMs - leaseTtlMs / 3 + 1);
      expect(a.lost).toHaveLength(1);
      expect(isStorageUnavailable(a.lost[0])).toBe(true);
      expect(a.membership.serves(shardOfQueue("q", shardCount))).toBe(false);
      expect(a.membership.ownedShardCount).toBe(0);
      expect(() => a.membership.writable()).toThrow(/no longer owns/);
      await expect(a.store.commit([putMessage(1, scheduleEntry(t0))])).rejects.toSatisfy(isStorageUnavailable);
    } finally {
      await admin.query("ROLLBACK");
    }
    expect(a.lost).toHaveLength(1);
  });

  it("learns from a renewal that another member claimed its shards, and stops serving them", async () => {
    const a = await join("a", "all");
    await admin.query("UPDATE holdshelf_shards SET expires_at = now() - interval '1 second'");
    await join("b", "all");
    expect(a.membership.serves(0)).toBe(true);
    await a.membership.renewOnce();
    expect(a.lost).toHaveLength(1);
    expect(isStorageUnavailable(a.lost[0])).toBe(true);
    expect(a.membership.serves(0)).toBe(false);
    expect(a.membership.ownedShardCount).toBe(0);
    // Told once: a second renewal, or a write that finds the fence broken, adds nothing.
    await a.membership.renewOnce();
    expect(a.membership.broken()).toBe(a.lost[0]);
    expect(a.lost).toHaveLength(1);
  });

  it("moves shards towards the assignment when a member joins: the old holder hands over, the new one claims and loads", async () => {
    const a = await join("a", "share");
    expect(a.membership.ownedShardCount).toBe(shardCount);
    const toB = assignedTo(["a", "b"], "b");
    const queue = queueIn(toB);
    await a.store.commit([
      { kind: "putQueue", queue: queueRecord(queue, 1) },
      { kind: "putSequence", next: 2 },
    ]);

    // b's share is held by a live member: its join claims nothing.
    const b = await join("b", "share");
    expect(b.membership.ownedShardCount).toBe(0);
    await a.balancer.start(a.moves);
    expect(a.released).toEqual([queue]);
    expect(a.membership.ownedShardCount).toBe(shardCount - toB.length);
    expect(a.routes.route(queue)).toBeUndefined();
    await b.balancer.start(b.moves);
    expect(b.gained).toEqual([queue]);
    expect(b.membership.ownedShardCount).toBe(toB.length);
    expect(await holders()).toEqual(
      new Map([
        ["a", assignedTo(["a", "b"], "a")],
        ["b", toB],
      ]),
    );
    expect(b.routes.route(queue)).toEqual({ kind: "local" });
    // a sees the move at its next step: the queue's calls go to b.
    await a.balancer.step();
    expect(a.routes.route(queue)).toEqual({ kind: "remote", nodeId: "b", address: "b:1" });
    // A late write to the queue on a is refused as moving, not written unfenced.
    await expect(a.store.commit([{ kind: "putQueue", queue: queueRecord(queue, 1) }])).rejects.toMatchObject({
      reason: "QUEUE_MOVING",
    });
  });

  it("takes over the shards of a member that left, and at once those of one whose session died", async () => {
    const a = await join("a", "share");
    const b = await join("b", "share");
    const c = await join("c", "share");
    await a.balancer.start(a.moves);
    await b.balancer.start(b.moves);
    await c.balancer.start(c.moves);
    await balance(a, b, c);
    expect(await holders()).toEqual(
      new Map([
        ["a", assignedTo(["a", "b", "c"], "a")],
        ["b", assignedTo(["a", "b", "c"], "b")],
        ["c", assignedTo(["a", "b", "c"], "c")],
      ]),
    );

    // b leaves cleanly: its shards are free at once.
    await b.store.close();
    await balance(a, c);
    expect(await holders()).toEqual(
      new Map([
        ["a", assignedTo(["a", "c"], "a")],
        ["c", assignedTo(["a", "c"], "c")],
      ]),
    );

    // c's process dies (its member session ends), its leases a minute from running out: a need not wait for them.
    const { rowCount } = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'holdshelf member c'",
    );
    expect(rowCount).toBe(1);
    await vi.waitFor(() => expect(c.lost).toHaveLength(1), { timeout: 5000, interval: 20 });
    await a.balancer.step();
    expect(await holders()).toEqual(new Map([["a", [0, 1, 2, 3, 4, 5, 6, 7]]]));
    expect(a.membership.ownedShardCount).toBe(shardCount);
  });

  it("routes a routing member's calls to the live owner of each shard, and holds no shard itself", async () => {
    const a = await join("a", "share");
    const b = await join("b", "share");
    const entry = await join("entry", "none");
    await a.balancer.start(a.moves);
    await b.balancer.start(b.moves);
    await a.balancer.step();
    await entry.balancer.start(entry.moves);
    expect(entry.membership.ownedShardCount).toBe(0);
    expect(entry.routes.shardOwners()).toEqual(
      new Map([
        ["a", "a:1"],
        ["b", "b:1"],
      ]),
    );
    for (let shard = 0; shard < shardCount; shard++) {
      const owner = assignedTo(["a", "b"], "a").includes(shard) ? "a" : "b";
      expect(entry.routes.routeShard(shard)).toEqual({ kind: "remote", nodeId: owner, address: `${owner}:1` });
    }
    await expect(entry.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1) }])).rejects.toMatchObject({
      reason: "QUEUE_MOVING",
    });
  });
});
