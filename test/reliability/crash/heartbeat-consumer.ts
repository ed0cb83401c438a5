import { setTimeout as sleep } from "node:timers/promises";
import type { Epoch } from "./crash-epoch.js";
import { TASKS } from "./crash-queues.js";
import { HeartbeatRenewer } from "./heartbeat-renewer.js";
import { deleteLeases, receiveLeases, type Lease } from "./lease-calls.js";
import type { Ledger, Outcome } from "./ledger.js";
import type { SeededRandom } from "./seeded-random.js";

/** A lease being worked on, and when the work finishes. */
interface Work {
  readonly lease: Lease;
  readonly finishAt: number;
}

/**
 * A consumer of TASKS whose work outlasts its 1 to 1.5 s leases: it keeps
 * them alive on a Heartbeat stream (renewing every ~400 ms), then deletes
 * them, or releases some on the stream. Its work survives a restart: on a
 * new stream it renews the leases it held before the kill.
 */
export class HeartbeatConsumer {
  private work: Work[] = [];

  constructor(
    private readonly ledger: Ledger,
    private readonly random: SeededRandom,
  ) {}

  /** Works TASKS until the epoch's kill begins. */
  async run(epoch: Epoch): Promise<void> {
    const renewer = new HeartbeatRenewer(epoch.rpc, (handle, at) => this.ledger.notices.push({ handle, at }));
    while (!epoch.killing) {
      const leases = await receiveLeases(epoch, this.ledger, TASKS, {
        maxMessages: this.random.int(1, 5),
        visibilityMs: this.random.int(1000, 1500),
        waitMs: this.random.chance(0.5) ? 0 : this.random.int(50, 300),
      });
      for (const lease of leases) this.work.push({ lease, finishAt: Date.now() + this.random.int(300, 4000) });
      const now = Date.now();
      const finished = this.work.filter((w) => w.finishAt <= now);
      const toRelease = finished.filter(() => this.random.chance(0.15));
      const toDelete = finished.filter((w) => !toRelease.includes(w));
      const going = this.work.filter((w) => w.finishAt > now);
      const renewals = [
        ...going.map((w) => ({ work: w, visibilityMs: this.random.int(1000, 2000) })),
        ...toRelease.map((w) => ({ work: w, visibilityMs: 0 })),
      ];
      const kept = await this.renew(epoch, renewer, renewals);
      this.work = going.filter((w) => kept.has(w));
      await deleteLeases(
        epoch,
        this.ledger,
        toDelete.map((w) => w.lease),
      );
      await sleep(this.random.int(250, 400));
    }
  }

  /** Renews (or releases) on the stream, records each outcome, and returns the work whose lease is still held. */
  private async renew(
    epoch: Epoch,
    renewer: HeartbeatRenewer,
    renewals: { work: Work; visibilityMs: number }[],
  ): Promise<Set<Work>> {
    const kept = new Set<Work>();
    if (renewals.length === 0) return kept;
    const start = Date.now();
    let results: { outcome: Outcome; reason: string }[];
    try {
      const states = await renewer.renew(
        TASKS,
        renewals.map((r) => ({ handle: r.work.lease.delivery.handle, visibilityMs: r.visibilityMs })),
      );
      results = states.map((state) => {
        const ok = state.held || state.reason === "RELEASED";
        if (!ok) this.ledger.entryRejected(state.reason, "Heartbeat renewal");
        return ok ? { outcome: "ok", reason: "" } : { outcome: "rejected", reason: state.reason };
      });
    } catch (error) {
      const failed = this.ledger.failure(error, "Heartbeat", epoch.killing);
      results = renewals.map(() => failed);
    }
    const end = Date.now();
    renewals.forEach((r, i) => {
      const result = results[i] ?? { outcome: "unknown", reason: "no state in the answer" };
      this.ledger.leaseOp(r.work.lease.delivery.handle, {
        kind: "renew",
        visibilityMs: r.visibilityMs,
        start,
        end,
        ...result,
        wire: "grpc",
      });
      // A renewal that broke with the stream may still hold: keep it, a later renewal will tell.
      if (r.visibilityMs > 0 && result.outcome !== "rejected") kept.add(r.work);
    });
    return kept;
  }
}
