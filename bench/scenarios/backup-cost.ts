/**
 * Scenario 19: what an online backup (`holdshelf backup`) costs the hot
 * path. A store holding `size` messages of 1 KiB, and scenario 2's load
 * (32 producers, 32 consumers, one message a call) on another queue of the
 * same broker, measured without a backup and with backups running back to
 * back for the whole window, each a `holdshelf backup` process writing and
 * fsyncing its file beside the broker, as an operator's job would.
 *
 * Four rows on one broker, in the order off, on, on, off: two pairs whose
 * drifts from the machine's load run opposite ways. The on rows give the
 * backups' own rate (MB/s of backup file) too.
 */
import { oneMinuteLoad } from "../machine-load.js";
import { startBackupLoop, type BackupRun } from "../backup-loop.js";
import { progressLog, sendMessages } from "../bulk-load.js";
import { createQueue, runPipeline } from "../pipeline.js";
import { measureWindow, percentiles, resultOf, type Scenario, type ScenarioResult } from "../scenario.js";

const shape = { producers: 32, consumers: 32, batch: 1 } as const;
const warmupMessages = 2_000;
const rowMessages = 20_000;
const order = [false, true, true, false] as const;

export const backupCost: Scenario = {
  name: "backup",
  sizeMeaning: "messages of 1 KiB stored while the load runs (what each backup copies)",
  defaultSize: 200_000,
  async run(context) {
    const stored = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    const backupDir = await context.tempDir();
    try {
      await createQueue(broker.address, "stored");
      await sendMessages(broker.address, "stored", stored, 4, progressLog(context.log, "backup: storing", stored));
      await createQueue(broker.address, "bench");
      await runPipeline(broker.address, { queue: "bench", messages: warmupMessages, ...shape });
      const rows: ScenarioResult[] = [];
      for (const [index, backups] of order.entries()) {
        const label = backups ? "backups running" : "no backup";
        context.log(`backup: row ${index + 1}, ${label}: ${rowMessages} messages (load ${oneMinuteLoad().toFixed(2)})`);
        const loop = backups ? startBackupLoop(broker.address, backupDir) : undefined;
        const { window, value: latencies } = await measureWindow(broker, () =>
          runPipeline(broker.address, { queue: "bench", messages: rowMessages, ...shape }),
        );
        const runs = (await loop?.stop()) ?? [];
        rows.push(
          resultOf(
            `19 ${label} (row ${index + 1}), ${stored} stored: scenario 2's load`,
            rowMessages,
            window,
            percentiles(latencies),
            backups ? backupFigures(runs) : {},
          ),
        );
      }
      return rows;
    } finally {
      await broker.stop();
    }
  },
};

/** The backups' count, mean time and rate, in MB (10^6 bytes) of backup file a second. */
function backupFigures(runs: readonly BackupRun[]): Record<string, number> {
  if (runs.length === 0) return { backups: 0 };
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const bytes = runs.reduce((sum, run) => sum + run.bytes, 0);
  return {
    backups: runs.length,
    backupMb: Number((bytes / runs.length / 1e6).toFixed(1)),
    backupSeconds: Number((seconds / runs.length).toFixed(2)),
    backupMbPerSecond: Number((bytes / 1e6 / seconds).toFixed(1)),
  };
}
