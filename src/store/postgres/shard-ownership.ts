import type pg from "pg";
import { HoldshelfError } from "../../errors/holdshelf-error.js";
import type { CommitFence } from "./commit-statement.js";
import { memberLockSpace } from "./cluster-view.js";

/** A shard's lease as a claim found it, for an operator's message. */
export interface ShardHolder {
  readonly shard: number;
  readonly owner: string;
  /** When the holder's lease runs out, by the database's clock. */
  readonly expiresAt: Date;
}

/** Why shards could not be claimed: live brokers hold them. */
export class ShardsHeldError extends Error {
  override readonly name = "ShardsHeldError";
  constructor(readonly holders: readonly ShardHolder[]) {
    const owners = [...new Set(holders.map((holder) => holder.owner))].join(", ");
    super(`${holders.length} shard(s) are held by live broker(s) ${owners}`);
  }
}

/** A renewal found shards at another epoch or owner: another broker claimed them. */
export class ShardsMovedError extends Error {
  override readonly name = "ShardsMovedError";
}

/**
 * This broker's membership and shard leases, all kept in PostgreSQL and
 * judged by its clock. The member session holds an advisory lock named by
 * the node id for as long as the broker lives: its death (a kill -9 closes
 * the socket) frees the lock at once, which lets another broker claim the
 * dead one's shards without waiting for their leases to run out. The same
 * lock stops two live brokers from using one node id. This is the SQL and
 * the epochs held; when to renew, and what a lapse or a lost shard means,
 * is src/cluster/shard-membership.ts's.
 */
export class ShardOwnership {
  /** Shard → the epoch this broker claimed it at. */
  private readonly held = new Map<number, number>();
  /** Where other brokers and clients reach this one, as last recorded. */
  address = "";
  /** The tail of the changes to the held shards under way: they run one at a time (see `serially`). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly member: pg.ClientBase,
    readonly nodeId: string,
    private readonly leaseTtlMs: number,
  ) {}

  /** Takes the member lock and records the member; throws if a live broker already uses this node id. */
  async join(address: string): Promise<void> {
    this.address = address;
    const { rows } = await this.member.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked",
      [memberLockSpace, this.nodeId],
    );
    if (!rows[0]!.locked) {
      throw new Error(`node id "${this.nodeId}" is in use by a live broker: give each broker its own --node-id`);
    }
    await this.member.query(
      `INSERT INTO holdshelf_members (node_id, address, started_at, heartbeat_at) VALUES ($1, $2, now(), now())
       ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address, started_at = now(), heartbeat_at = now()`,
      [this.nodeId, address],
    );
  }

  /**
   * Claims `shards` all at once or none: each must be free, ours already,
   * past its lease, or held by a member whose session is gone. A claim bumps
   * every epoch, which fences out any commit of a previous holder (including
   * an earlier life of this node). Throws ShardsHeldError naming the holders
   * otherwise.
   */
  async claim(client: pg.ClientBase, shards: readonly number[]): Promise<ShardClaim[]> {
    // Outside the claim's transaction, which a refused claim rolls back: a standby shows it is
    // alive on every attempt, and clears out members that died (their member lock is free).
    await client.query(
      `WITH alive AS (UPDATE holdshelf_members SET heartbeat_at = now() WHERE node_id = $1)
       DELETE FROM holdshelf_members WHERE node_id <> $1 AND pg_try_advisory_xact_lock($2, hashtext(node_id))`,
      [this.nodeId, memberLockSpace],
    );
    // A look without row locks first: a standby asks every 200 ms, and locking
    // the shard rows each time would hold up the owner's commits, which
    // share-lock them (commit-statement.ts).
    const holders = await this.holders(client, shards, "");
    if (holders.length > 0) throw new ShardsHeldError(holders);
    await client.query("BEGIN");
    try {
      // Again under the rows' locks: the owner may have renewed or come back meanwhile.
      const lockedHolders = await this.holders(client, shards, "FOR UPDATE");
      if (lockedHolders.length > 0) throw new ShardsHeldError(lockedHolders);
      const claimed = await client.query<{ shard: number; epoch: string; previous: string | null }>(claimStatement, [
        shards,
        this.nodeId,
        this.leaseTtlMs,
      ]);
      if (claimed.rowCount !== shards.length)
        throw new Error(`the cluster has ${claimed.rowCount} of the ${shards.length} shards asked for`);
      await client.query("COMMIT");
      this.held.clear();
      for (const row of claimed.rows) this.held.set(row.shard, Number(row.epoch));
      return claimsOf(claimed.rows);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }

  /**
   * Claims whichever of `shards` are claimable now (free, past their lease,
   * or held by a member whose session is gone), bumping their epochs, and
   * returns them; the others are left to their holders. Several brokers
   * share a cluster this way: each claims the shards assigned to it.
   */
  claimSome(client: pg.ClientBase, shards: readonly number[]): Promise<ShardClaim[]> {
    return this.serially(() => this.claimSomeNow(client, shards));
  }

  private async claimSomeNow(client: pg.ClientBase, shards: readonly number[]): Promise<ShardClaim[]> {
    if (shards.length === 0) return [];
    const held = new Set((await this.holders(client, shards, "")).map((holder) => holder.shard));
    const candidates = shards.filter((shard) => !held.has(shard));
    if (candidates.length === 0) return [];
    await client.query("BEGIN");
    try {
      // Again under the rows' locks: a holder may have renewed meanwhile.
      const stillHeld = new Set((await this.holders(client, candidates, "FOR UPDATE")).map((holder) => holder.shard));
      const claimable = candidates.filter((shard) => !stillHeld.has(shard));
      const claimed = await client.query<{ shard: number; epoch: string; previous: string | null }>(claimStatement, [
        claimable,
        this.nodeId,
        this.leaseTtlMs,
      ]);
      await client.query("COMMIT");
      for (const row of claimed.rows) this.held.set(row.shard, Number(row.epoch));
      return claimsOf(claimed.rows);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }

  /** Gives up some held shards (they are assigned to another member now), so their new owner claims them at once. */
  releaseSome(client: pg.ClientBase, shards: readonly number[]): Promise<number[]> {
    return this.serially(() => this.releaseSomeNow(client, shards));
  }

  private async releaseSomeNow(client: pg.ClientBase, shards: readonly number[]): Promise<number[]> {
    const { epochs } = this.fence(shards);
    const fenced = this.fence(shards).shards;
    const { rows } = await client.query<{ shard: number }>(
      `UPDATE holdshelf_shards s SET owner = NULL, expires_at = NULL
       FROM unnest($1::int[], $2::bigint[]) AS held(shard, epoch)
       WHERE s.shard = held.shard AND s.epoch = held.epoch AND s.owner = $3
       RETURNING s.shard`,
      [fenced, epochs, this.nodeId],
    );
    for (const shard of fenced) this.held.delete(shard);
    return rows.map((row) => row.shard).sort((a, b) => a - b);
  }

  /**
   * Runs changes to the held shards one at a time, each reading them when it
   * starts: a renewal that read them before a release ran would find the
   * released shards ownerless and take them for moved (the cluster crash run
   * found a broker that lost every shard that way).
   */
  private serially<T>(change: () => Promise<T>): Promise<T> {
    const result = this.tail.then(change, change);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Whether this broker holds the shard (claimed, and not released or lost). */
  holds(shard: number): boolean {
    return this.held.has(shard);
  }

  /** The shards of `shards` that live brokers hold, read with `locking` ("" or "FOR UPDATE"). */
  private async holders(client: pg.ClientBase, shards: readonly number[], locking: string): Promise<ShardHolder[]> {
    const { rows } = await client.query<{ shard: number; owner: string; expires_at: Date }>(
      `SELECT shard, owner, expires_at FROM (
         SELECT shard, owner, expires_at,
           owner IS NULL OR owner = $2 OR expires_at < now()
             OR pg_try_advisory_xact_lock($3, hashtext(owner)) AS claimable
         FROM holdshelf_shards WHERE shard = ANY($1::int[]) ORDER BY shard ${locking}) AS shard
       WHERE NOT claimable`,
      [shards, this.nodeId, memberLockSpace],
    );
    return rows.map((row) => ({ shard: row.shard, owner: row.owner, expiresAt: row.expires_at }));
  }

  /**
   * Extends every held lease by the TTL from now (the database's now) and
   * marks the member alive. Throws ShardsMovedError if any shard moved on:
   * another broker claimed it, so this one must stop serving it.
   */
  renew(client: pg.ClientBase): Promise<void> {
    return this.serially(() => this.renewNow(client));
  }

  private async renewNow(client: pg.ClientBase): Promise<void> {
    const { shards, epochs } = this.fence();
    const { rowCount } = await client.query(
      // The rows locked in shard order first, as claims and commits lock them (commit-statement.ts).
      `WITH locked AS (SELECT shard FROM holdshelf_shards WHERE shard = ANY($1::int[]) ORDER BY shard FOR NO KEY UPDATE),
       renewed AS (
         UPDATE holdshelf_shards s SET expires_at = now() + $4 * interval '1 millisecond'
         FROM unnest($1::int[], $2::bigint[]) AS held(shard, epoch)
         WHERE s.shard = held.shard AND s.epoch = held.epoch AND s.owner = $3 AND s.shard IN (SELECT shard FROM locked)
         RETURNING s.shard),
       alive AS (UPDATE holdshelf_members SET heartbeat_at = now() WHERE node_id = $3),
       -- Members whose session is gone (their lock is free) leave the table, so cluster status shows the live ones.
       dead AS (DELETE FROM holdshelf_members WHERE node_id <> $3 AND pg_try_advisory_xact_lock($5, hashtext(node_id)))
       SELECT shard FROM renewed`,
      [shards, epochs, this.nodeId, this.leaseTtlMs, memberLockSpace],
    );
    if (rowCount !== shards.length) {
      throw new ShardsMovedError(
        `${shards.length - (rowCount ?? 0)} of ${shards.length} shard(s) were claimed by another broker`,
      );
    }
  }

  /** Forgets this member (a standby stopping before it served). */
  async leave(): Promise<void> {
    await this.member.query("DELETE FROM holdshelf_members WHERE node_id = $1", [this.nodeId]);
  }

  /** Gives the held shards up (a clean shutdown), so a standby claims them at once; forgets the member. */
  release(client: pg.ClientBase): Promise<void> {
    return this.serially(() => this.releaseNow(client));
  }

  private async releaseNow(client: pg.ClientBase): Promise<void> {
    const { shards, epochs } = this.fence();
    await client.query(
      `UPDATE holdshelf_shards s SET owner = NULL, expires_at = NULL
       FROM unnest($1::int[], $2::bigint[]) AS held(shard, epoch)
       WHERE s.shard = held.shard AND s.epoch = held.epoch AND s.owner = $3`,
      [shards, epochs, this.nodeId],
    );
    this.held.clear();
    await client.query("DELETE FROM holdshelf_members WHERE node_id = $1", [this.nodeId]);
  }

  /** Records a new address for this member (the listener's, once its port is known). */
  async advertise(address: string): Promise<void> {
    this.address = address;
    await this.member.query("UPDATE holdshelf_members SET address = $2 WHERE node_id = $1", [this.nodeId, address]);
  }

  /** The shards held, each with its epoch; `only` narrows it to those shards. */
  fence(only?: Iterable<number>): CommitFence {
    const shards =
      only === undefined ? [...this.held.keys()] : [...new Set(only)].filter((shard) => this.held.has(shard));
    shards.sort((a, b) => a - b);
    return { shards, epochs: shards.map((shard) => this.held.get(shard)!) };
  }
}

/** A shard claimed, and who held it before (null: nobody, it was free or released). */
export interface ShardClaim {
  readonly shard: number;
  readonly previous: string | null;
}

// Claims shards ($1) for a node ($2) for a TTL ($3), bumping their epochs, and returns each one's previous
// owner: the FROM's rows are read from the statement's snapshot, before its update (the rows are locked already).
const claimStatement = `UPDATE holdshelf_shards s SET epoch = s.epoch + 1, owner = $2, expires_at = now() + $3 * interval '1 millisecond'
   FROM (SELECT shard, owner FROM holdshelf_shards WHERE shard = ANY($1::int[])) AS before
   WHERE s.shard = before.shard RETURNING s.shard, s.epoch, before.owner AS previous`;

function claimsOf(rows: readonly { shard: number; previous: string | null }[]): ShardClaim[] {
  return rows.map((row) => ({ shard: row.shard, previous: row.previous }));
}

/** STORAGE_UNAVAILABLE for a broker whose shards another broker claimed: its commits are fenced out. */
export function ownershipLost(): HoldshelfError {
  return new HoldshelfError(
    "STORAGE_UNAVAILABLE",
    "this broker no longer owns the queue's shard (another broker claimed it); retry",
  );
}
