import { setTimeout as sleep } from "node:timers/promises";
import { callOptions, type Epoch } from "./crash-epoch.js";
import { ALL_QUEUES } from "./crash-queues.js";
import { deleteLeases, receiveLeases } from "./lease-calls.js";
import type { Ledger } from "./ledger.js";

/** How long the drain may take once every lease has run out, before what is left counts as stuck. */
const drainLimitMs = 30_000;

/**
 * After the last restart: waits until `leasesEndBy` (every lease taken
 * before the last kill has run out by then), then receives and deletes
 * everything from every queue, recording each delivery as a drain delivery,
 * until a whole pass finds nothing and every queue counts 0 messages.
 * Returns what it could not empty (nothing when all went well).
 */
export async function drainQueues(epoch: Epoch, ledger: Ledger, leasesEndBy: number): Promise<string[]> {
  await sleep(Math.max(0, leasesEndBy - Date.now()));
  const giveUpAt = Date.now() + drainLimitMs;
  for (;;) {
    let found = 0;
    for (const queue of ALL_QUEUES) {
      for (;;) {
        const leases = await receiveLeases(
          epoch,
          ledger,
          queue,
          { maxMessages: 100, visibilityMs: 60_000, waitMs: 0 },
          true,
        );
        if (leases.length === 0) break;
        found += leases.length;
        await deleteLeases(epoch, ledger, leases);
      }
    }
    const left: string[] = [];
    for (const name of ALL_QUEUES) {
      const stats = (await epoch.rpc.getQueue({ name }, callOptions())).queue!.stats!;
      if (stats.visible + stats.inFlight + stats.delayed > 0n) {
        left.push(`${name}: ${stats.visible} visible, ${stats.inFlight} in flight, ${stats.delayed} delayed`);
      }
    }
    if (found === 0 && left.length === 0) return [];
    if (Date.now() > giveUpAt) return [`the drain could not empty the queues: ${left.join("; ")}`];
    await sleep(200);
  }
}
