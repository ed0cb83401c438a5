import { writeFile } from "node:fs/promises";
import type { CrashTarget } from "./crash-broker.js";
import { runCrashCycles, type CrashReport } from "./crash-run.js";
import type { CrashSettings } from "./crash-settings.js";

/**
 * Runs the crash cycles a test's settings ask for against `target`, and
 * reports as both kill tests do: the replay line first, progress lines on a
 * long run, the figures at the end, and the whole report as JSON where
 * HOLDSHELF_CRASH_REPORT names a file. Returns the report and the replay
 * line for the test's assertion messages.
 */
export async function runReportedCrash(
  label: string,
  settings: CrashSettings,
  target: CrashTarget,
): Promise<{ report: CrashReport; replay: string }> {
  const replay = `replay with HOLDSHELF_CRASH_SEED=${settings.seed}`;
  console.log(`${label}: ${replay}`);
  const report = await runCrashCycles({
    target,
    seed: settings.seed,
    cycles: settings.cycles,
    minutes: settings.minutes,
    runMs: [100, 2000],
    log: settings.minutes !== undefined || settings.cycles > 100 ? (line) => console.log(line) : () => undefined,
  });
  const { violations: _, ...figures } = report;
  console.log(`${label} figures: ${JSON.stringify(figures)}`);
  if (settings.reportFile) await writeFile(settings.reportFile, JSON.stringify(report, null, 2));
  return { report, replay };
}
