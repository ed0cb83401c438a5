import { setTimeout as sleep } from "node:timers/promises";
import type { Epoch } from "./crash-epoch.js";
import { MAX_VISIBILITY_MS, MIN_VISIBILITY_MS } from "./crash-queues.js";
import type { Lease, LeaseCalls } from "./lease-calls.js";
import type { Ledger } from "./ledger.js";
import type { SeededRandom } from "./seeded-random.js";

/** How a consumer treats what it receives: the shares of each fate, summing to at most 1 (the rest are held). */
export interface ConsumerHabits {
  /** Deleted at once, singly or in a batch. */
  readonly deleteNow: number;
  /** Extended with ChangeVisibility, then held. */
  readonly extend: number;
  /** Never touched again: the lease runs out (redelivery, or dead-lettering). */
  readonly abandon: number;
  /** Released with a visibility timeout of 0. */
  readonly release: number;
  /** Whether poison messages are never deleted (abandoned or released instead). */
  readonly sparePoison: boolean;
}

/** A held lease and when the consumer comes back to it. */
interface Held {
  readonly lease: Lease;
  readonly due: number;
  readonly extensions: number;
}

/**
 * A consumer of one queue that receives, deletes, extends, holds, abandons
 * and releases leases, over gRPC or SQS (its `calls`). Held leases outlive
 * an epoch: after a restart the consumer deletes or extends them as if
 * nothing happened.
 */
export class LeaseConsumer {
  private held: Held[] = [];

  constructor(
    private readonly ledger: Ledger,
    private readonly random: SeededRandom,
    private readonly queue: string,
    private readonly habits: ConsumerHabits,
    private readonly calls: LeaseCalls,
  ) {}

  /** Works the queue until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    while (!epoch.killing) {
      await this.tendHeld(epoch);
      const leases = await this.calls.receive(epoch, this.ledger, this.queue, {
        maxMessages: this.random.int(1, 10),
        visibilityMs: this.random.int(MIN_VISIBILITY_MS, MAX_VISIBILITY_MS),
        waitMs: this.random.chance(0.5) ? 0 : this.random.int(50, 500),
      });
      await this.handle(epoch, leases);
      await sleep(this.random.int(5, 30));
    }
  }

  private async handle(epoch: Epoch, leases: Lease[]): Promise<void> {
    const toDelete: Lease[] = [];
    const toExtend: Lease[] = [];
    const toRelease: Lease[] = [];
    const { deleteNow, extend, abandon, release, sparePoison } = this.habits;
    for (const lease of leases) {
      if (lease.poison && sparePoison) {
        if (this.random.chance(0.5)) toRelease.push(lease);
        continue;
      }
      const draw = this.random.next();
      if (draw < deleteNow) toDelete.push(lease);
      else if (draw < deleteNow + extend) toExtend.push(lease);
      else if (draw < deleteNow + extend + abandon) continue;
      else if (draw < deleteNow + extend + abandon + release) toRelease.push(lease);
      else this.hold(lease, 0);
    }
    await this.deleteSomeBatched(epoch, toDelete);
    await this.releaseSomeBatched(epoch, toRelease);
    for (const lease of toExtend) {
      if (epoch.killing) break;
      const [extended] = await this.calls.change(
        epoch,
        this.ledger,
        [lease],
        this.random.int(MIN_VISIBILITY_MS, MAX_VISIBILITY_MS),
      );
      if (extended) this.hold(extended, 1);
    }
  }

  private hold(lease: Lease, extensions: number): void {
    this.held.push({ lease, due: Date.now() + this.random.int(100, 2500), extensions });
  }

  /** Deletes or extends the held leases that are due. */
  private async tendHeld(epoch: Epoch): Promise<void> {
    const now = Date.now();
    const due = this.held.filter((h) => h.due <= now);
    if (due.length === 0) return;
    this.held = this.held.filter((h) => h.due > now);
    const toDelete: Lease[] = [];
    for (const h of due) {
      if (h.extensions < 2 && this.random.chance(0.3)) {
        const [extended] = await this.calls.change(
          epoch,
          this.ledger,
          [h.lease],
          this.random.int(MIN_VISIBILITY_MS, MAX_VISIBILITY_MS),
        );
        if (extended) this.hold(extended, h.extensions + 1);
      } else {
        toDelete.push(h.lease);
      }
    }
    await this.deleteSomeBatched(epoch, toDelete);
  }

  /** Deletes with one batch call or one single call per lease, at random. */
  private async deleteSomeBatched(epoch: Epoch, leases: Lease[]): Promise<void> {
    if (this.random.chance(0.5)) return this.calls.delete(epoch, this.ledger, leases);
    for (const lease of leases) await this.calls.delete(epoch, this.ledger, [lease]);
  }

  /** Releases with one batch call or one single call per lease, at random. */
  private async releaseSomeBatched(epoch: Epoch, leases: Lease[]): Promise<void> {
    if (this.random.chance(0.5)) {
      await this.calls.change(epoch, this.ledger, leases, 0);
      return;
    }
    for (const lease of leases) await this.calls.change(epoch, this.ledger, [lease], 0);
  }
}
