import { setTimeout as sleep } from "node:timers/promises";
import type { Epoch } from "./crash-epoch.js";
import { receiveFifo, type FifoLease } from "./fifo-calls.js";
import type { FifoLedger } from "./fifo-ledger.js";
import { FIFO_MAX_VISIBILITY_MS, FIFO_MIN_VISIBILITY_MS, type FifoQueue } from "./fifo-queues.js";
import { changeLeases, deleteLeases } from "./lease-calls.js";
import type { SeededRandom } from "./seeded-random.js";

/** A group's leases from one answer, held, when the consumer comes back to them, and what it does then. */
interface HeldRun {
  readonly leases: FifoLease[];
  readonly due: number;
  readonly extensions: number;
  /** "delete" (maybe extending first), or "release": the run failed. */
  readonly then: "delete" | "release";
}

/**
 * A consumer of the FIFO queues: receives up to 10 messages at a time and
 * treats each group's messages in an answer as one run, in order: deletes
 * it, deletes a prefix and releases the rest, releases it, fails it
 * (releases a prefix at once and the rest after a while: the released
 * messages are visible while the rest is leased, and must wait), abandons
 * it (its lease runs out and blocks the group meanwhile), or holds it for a
 * while, maybe extending it, and then deletes it. It never deletes a
 * message of a run while keeping an earlier one, as a FIFO consumer must
 * not. Held runs outlive an epoch: after a restart the consumer goes on
 * with them.
 */
export class FifoConsumer {
  private held: HeldRun[] = [];

  constructor(
    private readonly ledger: FifoLedger,
    private readonly random: SeededRandom,
    private readonly queues: readonly FifoQueue[],
  ) {}

  /** Works the queues until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    while (!epoch.killing) {
      await this.tendHeld(epoch);
      const queue = this.queues[this.random.int(0, this.queues.length - 1)]!;
      const leases = await receiveFifo(epoch, this.ledger, queue, {
        maxMessages: this.random.int(1, 10),
        visibilityMs: this.random.int(FIFO_MIN_VISIBILITY_MS, FIFO_MAX_VISIBILITY_MS),
        waitMs: this.random.chance(0.5) ? 0 : this.random.int(50, 300),
      });
      await this.handle(epoch, leases);
      await sleep(this.random.int(5, 20));
    }
  }

  private async handle(epoch: Epoch, leases: FifoLease[]): Promise<void> {
    const toDelete: FifoLease[] = [];
    const toRelease: FifoLease[] = [];
    for (const run of runsByGroup(leases)) {
      // A run of several fails more often than one message does: it is what leaves a group's head visible behind a lease.
      const draw = run.length > 1 && this.random.chance(0.15) ? 0.75 : this.random.next();
      if (draw < 0.55) {
        toDelete.push(...run);
      } else if (draw < 0.65) {
        const kept = this.random.int(0, run.length - 1);
        toDelete.push(...run.slice(0, kept));
        toRelease.push(...run.slice(kept));
      } else if (draw < 0.72) {
        toRelease.push(...run);
      } else if (draw < 0.8) {
        const failed = this.random.int(1, run.length);
        toRelease.push(...run.slice(0, failed));
        if (failed < run.length) this.hold(run.slice(failed), 0, "release");
      } else if (draw < 0.85) {
        // abandoned: neither deleted nor released, so its lease runs out
      } else {
        this.hold(run, 0, "delete");
      }
    }
    await this.deleteSomeBatched(epoch, toDelete);
    if (toRelease.length > 0 && !epoch.killing) await changeLeases(epoch, this.ledger, toRelease, 0);
  }

  private hold(leases: FifoLease[], extensions: number, then: HeldRun["then"]): void {
    this.held.push({ leases, due: Date.now() + this.random.int(100, 1500), extensions, then });
  }

  /** Deletes, extends or releases the held runs that are due. */
  private async tendHeld(epoch: Epoch): Promise<void> {
    const now = Date.now();
    const due = this.held.filter((h) => h.due <= now);
    if (due.length === 0) return;
    this.held = this.held.filter((h) => h.due > now);
    const toDelete: FifoLease[] = [];
    for (const run of due) {
      if (run.then === "release") {
        await changeLeases(epoch, this.ledger, run.leases, 0);
      } else if (run.extensions < 2 && this.random.chance(0.3)) {
        const visibilityMs = this.random.int(FIFO_MIN_VISIBILITY_MS, FIFO_MAX_VISIBILITY_MS);
        const confirmed = new Set(await changeLeases(epoch, this.ledger, run.leases, visibilityMs));
        const extended = run.leases.filter((lease) => confirmed.has(lease));
        if (extended.length > 0) this.hold(extended, run.extensions + 1, "delete");
      } else {
        toDelete.push(...run.leases);
      }
    }
    await this.deleteSomeBatched(epoch, toDelete);
  }

  /** Deletes each queue's leases with one DeleteBatch (one durable write), or one Delete per lease in order, at random. */
  private async deleteSomeBatched(epoch: Epoch, leases: FifoLease[]): Promise<void> {
    for (const queue of this.queues) {
      const ofQueue = leases.filter((lease) => lease.delivery.queue === queue.name);
      if (this.random.chance(0.5)) await deleteLeases(epoch, this.ledger, ofQueue);
      else for (const lease of ofQueue) await deleteLeases(epoch, this.ledger, [lease]);
    }
  }
}

/** An answer's leases by group, each group's in answer order (which is its send order). */
function runsByGroup(leases: readonly FifoLease[]): FifoLease[][] {
  const runs = new Map<string, FifoLease[]>();
  for (const lease of leases) {
    const run = runs.get(lease.delivery.group);
    if (run) run.push(lease);
    else runs.set(lease.delivery.group, [lease]);
  }
  return [...runs.values()];
}
