/**
 * Scenario 19: what an online backup (`holdshelf backup`) costs the hot
 * path. A store holding `size` messages of 1 KiB in one queue, and a steady
 * load on another queue of the same broker (Send of one message at a fixed
 * rate, four consumers each Receive up to 10 and DeleteBatch), measured for
 * a fixed window without a backup and with backups running back to back for
 * the whole window, each a `holdshelf backup` process writing and fsyncing
 * its file beside the broker, as an operator's job would.
 *
 * Four rows on one broker, in the order off, on, on, off: two pairs whose
 * drifts from the machine's load run opposite ways. Each row gives Send's,
 * Receive's and DeleteBatch's p50 and p99, and the on rows the backups' own
 * rate (MB of backup file a second). A fifth row is one backup with no
 * load: its rate, and the broker's CPU per MB it copies.
 */
import { oneMinuteLoad } from "../machine-load.js";
import { startBackupLoop, type BackupRun } from "../backup-loop.js";
import { progressLog, sendMessages } from "../bulk-load.js";
import { createQueue } from "../pipeline.js";
import { measureWindow, percentiles, resultOf, type Scenario, type ScenarioResult } from "../scenario.js";
import { runSteadyLoad } from "../steady-load.js";

const load = { queue: "bench", rate: 300, seconds: 30, consumers: 4 } as const;
const order = [false, true, true, false] as const;

export const backupCost: Scenario = {
  name: "backup",
  sizeMeaning: "messages of 1 KiB stored while the load runs (what each backup copies)",
  defaultSize: 100_000,
  async run(context) {
    const stored = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    const backupDir = await context.tempDir();
    try {
      await createQueue(broker.address, "stored");
      await sendMessages(broker.address, "stored", stored, 4, progressLog(context.log, "backup: storing", stored));
      await createQueue(broker.address, load.queue);
      await runSteadyLoad(broker.address, { ...load, seconds: 3 });
      const rows: ScenarioResult[] = [];
      for (const [index, backups] of order.entries()) {
        const label = backups ? "backups running" : "no backup";
        context.log(
          `backup: row ${index + 1}, ${label}, ${load.rate} msg/s for ${load.seconds} s (load ${oneMinuteLoad().toFixed(2)})`,
        );
        const loop = backups ? startBackupLoop(broker.address, backupDir) : undefined;
        const { window, value } = await measureWindow(broker, () => runSteadyLoad(broker.address, load));
        const runs = (await loop?.stop()) ?? [];
        const p = (values: number[]): string => {
          const { p50, p99 } = percentiles(values);
          return `${p50.toFixed(1)} / ${p99.toFixed(1)}`;
        };
        rows.push(
          resultOf(
            `19 ${label} (row ${index + 1}), ${stored} stored: ${load.rate} msg/s steady`,
            value.messages,
            window,
            percentiles([...value.sendMs]),
            {
              sendP50P99Ms: p(value.sendMs),
              receiveP50P99Ms: p(value.receiveMs),
              deleteBatchP50P99Ms: p(value.deleteMs),
              ...(backups ? backupFigures(runs) : {}),
            },
          ),
        );
      }
      // Last, a backup with no load: its rate, and the broker's CPU per MB it copies.
      context.log(`backup: row 5, a backup alone (load ${oneMinuteLoad().toFixed(2)})`);
      const alone = startBackupLoop(broker.address, backupDir, 1);
      const { window } = await measureWindow(broker, () => alone.stop());
      const [run] = await alone.stop();
      rows.push(
        resultOf(`19 a backup alone, ${stored} stored`, 0, window, undefined, {
          ...backupFigures(run === undefined ? [] : [run]),
          brokerCpuMsPerMb:
            run === undefined ? NaN : Number(((1e3 * window.brokerCpuSeconds) / (run.bytes / 1e6)).toFixed(1)),
        }),
      );
      return rows;
    } finally {
      await broker.stop();
    }
  },
};

/** The backups' count, mean size and time, and rate in MB (10^6 bytes) of backup file a second. */
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
