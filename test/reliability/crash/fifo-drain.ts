import { setTimeout as sleep } from "node:timers/promises";
import { callOptions, type Epoch } from "./crash-epoch.js";
import { receiveFifo } from "./fifo-calls.js";
import type { FifoLedger } from "./fifo-ledger.js";
import { FIFO_QUEUES } from "./fifo-queues.js";
import { deleteLeases } from "./lease-calls.js";

/** How long the drain may take once every lease has run out, before what is left counts as stuck. */
const drainLimitMs = 30_000;

/**
 * After the last restart: waits until `leasesEndBy` (every lease taken
 * before the last kill has run out by then, so no group is blocked), then
 * receives and deletes everything from the FIFO queues, recording each
 * delivery as a drain delivery, until a pass finds nothing and every queue
 * counts 0 messages. Returns what it could not empty.
 */
export async function drainFifoQueues(epoch: Epoch, ledger: FifoLedger, leasesEndBy: number): Promise<string[]> {
  await sleep(Math.max(0, leasesEndBy - Date.now()));
  const giveUpAt = Date.now() + drainLimitMs;
  // After a pass that found nothing though the queues are not empty, receives wait for something to show up.
  let waitMs = 0;
  for (;;) {
    let found = 0;
    for (const queue of FIFO_QUEUES) {
      for (;;) {
        const leases = await receiveFifo(
          epoch,
          ledger,
          queue,
          { maxMessages: 100, visibilityMs: 60_000, waitMs },
          true,
        );
        if (leases.length === 0) break;
        found += leases.length;
        await deleteLeases(epoch, ledger, leases);
      }
    }
    if (found > 0) continue;
    const left: string[] = [];
    for (const { name } of FIFO_QUEUES) {
      const stats = (await epoch.rpc.getQueue({ name }, callOptions())).queue!.stats!;
      if (stats.visible + stats.inFlight + stats.delayed > 0n) {
        left.push(`${name}: ${stats.visible} visible, ${stats.inFlight} in flight, ${stats.delayed} delayed`);
      }
    }
    if (left.length === 0) return [];
    if (Date.now() > giveUpAt) return [`the drain could not empty the queues: ${left.join("; ")}`];
    waitMs = 500;
  }
}
