import type { PostgresStore } from "../store/postgres/postgres-store.js";
import { takeInbound } from "../store/postgres/postgres-inbox.js";
import { ownershipLost } from "../store/postgres/shard-ownership.js";
import type { MembershipWork, ShardMembership } from "./shard-membership.js";
import type { ShardMoves } from "./shard-moves.js";

/**
 * Takes in the messages other brokers sent to queues this broker serves
 * (dead-letter moves and redrives across shards): on a notification, or when
 * balancing finds the inboxes non-empty, one take at a time, and once more
 * if asked again meanwhile. The take itself is one fenced statement
 * (src/store/postgres/postgres-inbox.ts).
 */
export class InboxPoller implements MembershipWork {
  /** The take under way, and whether another was asked for meanwhile (a notification during a take). */
  private taking: Promise<void> | undefined;
  private takeAgain = false;
  /** How the broker hears of arrivals; unset until the cluster starts, and again once it stops. */
  moves: ShardMoves | undefined;

  constructor(
    private readonly membership: ShardMembership,
    private readonly store: Pick<PostgresStore, "drain">,
  ) {}

  /** Resolves once the take under way (if any) has shown what it took. */
  async taken(): Promise<void> {
    while (this.taking !== undefined) await this.taking;
  }

  /** Takes the inboxes of the shards served in, once now, and once more if asked again meanwhile. */
  takeSoon(): void {
    if (this.taking !== undefined) {
      this.takeAgain = true;
      return;
    }
    this.taking = this.takeOnce()
      .catch(() => undefined) // the poll tries again; storage faults reach the broker through commits and renewals
      .finally(() => {
        this.taking = undefined;
        if (this.takeAgain) {
          this.takeAgain = false;
          this.takeSoon();
        }
      });
  }

  private async takeOnce(): Promise<void> {
    const served = this.membership.servedShards();
    if (this.moves === undefined || !this.membership.settled || served.length === 0) return;
    // Commits asked for before land first: the take sees (and the broker's memory agrees on) every data space they moved.
    await this.store.drain();
    const { fenceHeld, arrivals } = await takeInbound(
      this.membership.pool,
      this.membership.fence(this.membership.servedShards()),
    );
    if (!fenceHeld) return this.membership.loseOwnership(ownershipLost(), "claimed-by-another");
    if (arrivals.length > 0 && this.membership.lost === undefined) this.moves?.arrived(arrivals);
  }

  /** A take under way fails on the old pool and the next poll takes again: a reconnect need not wait for it. */
  paused(): Promise<void> {
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.moves = undefined;
    await this.taking;
  }
}
