// PostgresStore's ownership: what only a shared database has. Two stores on
// one database cannot both commit; a claim waits for a live owner, and takes
// over from a dead one (its member session gone) or one whose lease ran out;
// a store that lost its shards writes nothing and says so.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isStorageUnavailable } from "../../src/store/storage-unavailable.js";
import { ShardCluster, type ShardClusterOptions } from "../../src/cluster/shard-cluster.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { ShardsHeldError } from "../../src/store/postgres/shard-ownership.js";
import { StoreOpenError } from "../../src/store/store-open-error.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { settle } from "../support/wait.js";
import { putMessage, queueRecord, scheduleEntry, t0 } from "./store-fixtures.js";

const postgres = postgresForFile();

describe.skipIf(skipWithoutPostgres)("PostgresStore ownership", () => {
  let url: string;
  let admin: pg.Client;
  const opened: PostgresStore[] = [];

  beforeEach(async () => {
    url = await postgres().createDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
    await admin.end();
  });

  async function open(nodeId: string, options: Partial<ShardClusterOptions> = {}): Promise<PostgresStore> {
    const { store } = await ShardCluster.open({
      urls: [url],
      nodeId,
      advertisedAddress: `${nodeId}:1`,
      shardCount: 4,
      ...options,
    });
    opened.push(store);
    return store;
  }

  /** Ends every lease now, as if the owner had stopped renewing a TTL ago (its member session stays). */
  async function expireLeases(): Promise<void> {
    await admin.query("UPDATE holdshelf_shards SET expires_at = now() - interval '1 second'");
  }

  /** Closes the member session of `nodeId`, as the death of its broker process would. */
  async function killMemberSession(nodeId: string): Promise<void> {
    const { rowCount } = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [`holdshelf member ${nodeId}`],
    );
    expect(rowCount).toBe(1);
  }

  /**
   * Runs `call` (on store "a") while `lock`, taken in an open transaction,
   * blocks it; cuts the blocked connection, releases the lock, and resolves
   * to what the call ended with (its error, or undefined).
   */
  async function cutWhileLocked(lock: string, call: () => Promise<unknown>): Promise<unknown> {
    await admin.query("BEGIN");
    await admin.query(lock);
    const ended = call().then(
      () => undefined,
      (error: unknown) => error,
    );
    const waiting =
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'holdshelf a' AND wait_event_type = 'Lock'";
    await vi.waitFor(async () => expect((await admin.query(waiting)).rowCount).toBe(1), {
      timeout: 5000,
      interval: 20,
    });
    await admin.query(`SELECT pg_terminate_backend(pid) FROM (${waiting}) AS blocked`);
    await admin.query("ROLLBACK");
    return ended;
  }

  async function storedIds(): Promise<string[]> {
    const { rows } = await admin.query<{ id: string }>(
      "SELECT replace(id::text, '-', '') AS id FROM holdshelf_content ORDER BY id",
    );
    return rows.map((row) => row.id);
  }

  it("makes a second broker wait while the first lives, naming the holder", async () => {
    await open("a");
    const refused = await open("b", { claimTimeoutMs: 0 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ShardsHeldError);
    expect((refused as ShardsHeldError).holders.map((holder) => holder.owner)).toEqual(["a", "a", "a", "a"]);
    expect((refused as Error).message).toContain("a");
  });

  it("refuses a node id that a live broker uses", async () => {
    await open("a");
    await expect(open("a", { claimTimeoutMs: 0 })).rejects.toThrow(/node id "a" is in use by a live broker/);
  });

  it("takes over from a broker whose member session died, without waiting for its lease", async () => {
    await open("a", { leaseTtlMs: 60_000 });
    await killMemberSession("a");
    const started = performance.now();
    await open("b", { leaseTtlMs: 60_000, claimTimeoutMs: 5000 });
    expect(performance.now() - started).toBeLessThan(5000);
    const { rows } = await admin.query<{ owner: string; epoch: string }>(
      "SELECT DISTINCT owner, epoch FROM holdshelf_shards",
    );
    expect(rows).toEqual([{ owner: "b", epoch: "2" }]);
  });

  it("fences a broker whose shards were claimed: its commit writes nothing, fails STORAGE_UNAVAILABLE, and it is told once", async () => {
    const lost: unknown[] = [];
    const a = await open("a", { onOwnershipLost: (error) => lost.push(error) });
    await a.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    const before = scheduleEntry(t0);
    await a.commit([putMessage(1, before)]);

    await expireLeases();
    const b = await open("b");
    const late = scheduleEntry(t0);
    const refused = await a.commit([putMessage(1, late)]).catch((error: unknown) => error);
    expect(isStorageUnavailable(refused)).toBe(true);
    expect((refused as Error).message).toContain("no longer owns");
    expect(lost).toHaveLength(1);
    // Later commits are refused too, without reaching the database.
    await expect(a.commit([putMessage(1, scheduleEntry(t0))])).rejects.toSatisfy(isStorageUnavailable);
    expect(await storedIds()).toEqual([before.id]);
    const [queue] = (await b.load()).queues;
    expect(queue!.schedule.entries().map((entry) => entry.id)).toEqual([before.id]);
  });

  it("lands every commit a claim races either before the claim (the new owner loads it) or not at all", async () => {
    const a = await open("a");
    await a.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    const outcomes: { id: string; written: Promise<boolean> }[] = [];
    const commitOne = (): void => {
      const entry = scheduleEntry(t0 + outcomes.length);
      outcomes.push({
        id: entry.id,
        written: a.commit([putMessage(1, entry)]).then(
          () => true,
          () => false,
        ),
      });
    };
    for (let i = 0; i < 50; i++) commitOne();
    await expireLeases();
    let claimDone = false;
    const claimed = open("b").finally(() => (claimDone = true));
    // Commits keep coming, a batch per turn of the event loop, until well after the claim.
    let afterClaim = 0;
    while (afterClaim < 50) {
      commitOne();
      if (claimDone) afterClaim++;
      await settle();
    }
    const b = await claimed;
    const results = await Promise.all(outcomes.map(async ({ id, written }) => ({ id, written: await written })));
    const acknowledged = results.filter((result) => result.written).map((result) => result.id);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeLessThan(results.length);
    const loaded = (await b.load()).queues[0]!.schedule.entries().map((entry) => entry.id);
    expect(new Set(loaded)).toEqual(new Set(acknowledged));
    expect(new Set(await storedIds())).toEqual(new Set(acknowledged));
  });

  it("learns from a renewal that its shards moved, with no commit to tell it", async () => {
    const lost: unknown[] = [];
    await open("a", { leaseTtlMs: 600, onOwnershipLost: (error) => lost.push(error) });
    await expireLeases();
    await open("b", { leaseTtlMs: 600 });
    await vi.waitFor(() => expect(lost).toHaveLength(1), { timeout: 5000, interval: 20 });
    expect(isStorageUnavailable(lost[0])).toBe(true);
  });

  it("stops serving once its renewals hang for a lease's length, with no commit to tell it", async () => {
    const lost: unknown[] = [];
    await open("a", { leaseTtlMs: 1000, onOwnershipLost: (error) => lost.push(error) });
    // A database that answers nothing: the renewals wait on these row locks.
    await admin.query("BEGIN");
    await admin.query("SELECT shard FROM holdshelf_shards FOR UPDATE");
    const since = performance.now();
    try {
      await vi.waitFor(() => expect(lost).toHaveLength(1), { timeout: 5000, interval: 20 });
    } finally {
      await admin.query("ROLLBACK");
    }
    expect(performance.now() - since).toBeLessThan(2000);
    expect(isStorageUnavailable(lost[0])).toBe(true);
  });

  it("renews its leases while it lives, so nobody can claim them", async () => {
    await open("a", { leaseTtlMs: 600 });
    // Three TTLs: without renewals the leases would have run out twice over.
    await new Promise((resolve) => setTimeout(resolve, 1800));
    await expect(open("b", { claimTimeoutMs: 0, leaseTtlMs: 600 })).rejects.toBeInstanceOf(ShardsHeldError);
  });

  it("hands its shards to a waiting broker at once when it closes", async () => {
    const a = await open("a", { leaseTtlMs: 60_000 });
    const waiting = open("b", { leaseTtlMs: 60_000, claimTimeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await a.close();
    const closedAt = performance.now();
    await waiting;
    expect(performance.now() - closedAt).toBeLessThan(5000);
  });

  it("stops writing the moment its member session is cut, then a reopen reclaims and writes again", async () => {
    const lost: unknown[] = [];
    const a = await open("a", { onOwnershipLost: (error) => lost.push(error) });
    await a.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    // Without its session the member lock is free: another broker may claim the shards at any moment.
    await killMemberSession("a");
    await vi.waitFor(() => expect(lost).toHaveLength(1), { timeout: 5000, interval: 20 });
    expect(isStorageUnavailable(lost[0])).toBe(true);
    const failed = await a.commit([putMessage(1, scheduleEntry(t0))]).catch((error: unknown) => error);
    expect(isStorageUnavailable(failed)).toBe(true);
    expect(await storedIds()).toEqual([]);

    await a.reopen();
    await a.probeWrite();
    a.resumeWrites();
    const entry = scheduleEntry(t0);
    await a.commit([putMessage(1, entry)]);
    expect((await a.load()).queues[0]!.schedule.entries().map((loaded) => loaded.id)).toEqual([entry.id]);
  });

  it("fails a commit whose connection is cut mid-statement with STORAGE_UNAVAILABLE naming PostgreSQL's code, not its host", async () => {
    const lost: unknown[] = [];
    const a = await open("a", { onOwnershipLost: (error) => lost.push(error) });
    await a.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    // Hold the shard rows, so the commit's fence waits; then cut the waiting connection.
    const failed = await cutWhileLocked("SELECT shard FROM holdshelf_shards FOR UPDATE", () =>
      a.commit([putMessage(1, scheduleEntry(t0))]),
    );
    expect(isStorageUnavailable(failed)).toBe(true);
    expect((failed as Error).message).toBe(
      "storage write failed (PostgreSQL 57P01); the broker is recovering, retry later",
    );
    expect(await storedIds()).toEqual([]);
    // A lost connection is a storage failure, not a lost shard: the member session is fine.
    expect(lost).toEqual([]);
  });

  it("fails a read whose connection is cut with STORAGE_UNAVAILABLE, not an unexpected error", async () => {
    // What a PostgreSQL failover does to a Receive reading its bodies (the cluster crash run found it logged as unexpected).
    const a = await open("a");
    await a.commit([
      { kind: "putQueue", queue: queueRecord("q", 1) },
      { kind: "putSequence", next: 2 },
    ]);
    const entry = scheduleEntry(t0);
    await a.commit([putMessage(1, entry)]);
    const failed = await cutWhileLocked("LOCK TABLE holdshelf_content IN ACCESS EXCLUSIVE MODE", () =>
      a.readMessages(1, [{ id: entry.id, hasCheckpoint: false }]),
    );
    expect(isStorageUnavailable(failed)).toBe(true);
    expect((failed as Error).message).toBe(
      "storage read failed (PostgreSQL 57P01); the broker is recovering, retry later",
    );
  });

  it("stands by on a reopen while another broker holds its shards", async () => {
    const a = await open("a");
    await expireLeases();
    await open("b");
    const refused = await a.reopen().catch((error: unknown) => error);
    expect(isStorageUnavailable(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/^standing by: 4 shard\(s\) are held by live broker\(s\) b/);
  });

  it("keeps standing by when its own connections are cut while it waits, and takes over when the shards are free", async () => {
    const a = await open("a", { leaseTtlMs: 60_000 });
    const reasons: unknown[] = [];
    const waiting = open("b", {
      leaseTtlMs: 60_000,
      claimTimeoutMs: 30_000,
      onWaiting: (reason) => reasons.push(reason),
    });
    await vi.waitFor(() => expect(reasons.length).toBeGreaterThan(0), { timeout: 5000, interval: 20 });
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name IN ('holdshelf b', 'holdshelf member b')",
    );
    await vi.waitFor(() => expect(reasons.some((reason) => !(reason instanceof ShardsHeldError))).toBe(true), {
      timeout: 5000,
      interval: 20,
    });
    await a.close();
    const b = await waiting;
    expect(b).toBeInstanceOf(PostgresStore);
    const { rows } = await admin.query<{ owner: string }>("SELECT DISTINCT owner FROM holdshelf_shards");
    expect(rows).toEqual([{ owner: "b" }]);
  });

  it("retries a database it cannot reach until its claim timeout, then fails naming the host", async () => {
    const reasons: unknown[] = [];
    const started = performance.now();
    const refused = await ShardCluster.open({
      urls: ["postgres://holdshelf:secret@127.0.0.1:1/nothing"],
      nodeId: "a",
      advertisedAddress: "a:1",
      claimTimeoutMs: 1500,
      onWaiting: (reason) => reasons.push(reason),
    }).catch((error: unknown) => error);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    expect(reasons.length).toBeGreaterThan(0);
    expect((refused as Error).message).toMatch(/^no PostgreSQL host takes writes \(127\.0\.0\.1:1: ECONNREFUSED/);
    expect((refused as Error).message).not.toContain("secret");
  });

  it("refuses a database written in a newer layout instead of misreading it", async () => {
    const a = await open("a");
    await a.close();
    opened.length = 0;
    await admin.query("UPDATE holdshelf_cluster SET layout_version = 99");
    const refused = await open("a").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreOpenError);
    expect((refused as Error).message).toContain("layout 99");
  });

  it("keeps the shard count the cluster was created with", async () => {
    await (await open("a", { shardCount: 8 })).close();
    opened.length = 0;
    await open("a", { shardCount: 3 });
    const { rows } = await admin.query<{ count: string }>("SELECT count(*) FROM holdshelf_shards");
    expect(rows[0]!.count).toBe("8");
  });

  it("places each queue in the shard its name hashes to, and keeps it there when the queue is put again", async () => {
    const a = await open("a");
    await a.commit([
      { kind: "putQueue", queue: queueRecord("alpha", 1) },
      { kind: "putQueue", queue: queueRecord("beta", 2) },
    ]);
    await admin.query("UPDATE holdshelf_queues SET shard = 3 WHERE name = 'alpha'");
    await a.close();
    opened.length = 0;
    const again = await open("a");
    await again.load();
    await again.commit([{ kind: "putQueue", queue: queueRecord("alpha", 1, 5) }]);
    const { rows } = await admin.query<{ name: string; shard: number; data_id: string }>(
      "SELECT name, shard, data_id FROM holdshelf_queues ORDER BY name",
    );
    expect(rows[0]).toEqual({ name: "alpha", shard: 3, data_id: "5" });
    expect(rows[1]!.shard).toBeGreaterThanOrEqual(0);
    expect(rows[1]!.shard).toBeLessThan(4);
  });
});
