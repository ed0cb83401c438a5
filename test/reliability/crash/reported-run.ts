import { writeFile } from "node:fs/promises";
import type { CrashTarget } from "./crash-broker.js";
import { runCrashCycles, type CrashReport, type CrashRunOptions } from "./crash-run.js";
import type { CrashSettings } from "./crash-settings.js";

/**
 * Runs the mixed workload's crash cycles a test's settings ask for against
 * `target`, reported as runReported does.
 */
export function runReportedCrash(
  label: string,
  settings: CrashSettings,
  target: CrashTarget,
): Promise<{ report: CrashReport; replay: string }> {
  return runReported(label, settings, target, runCrashCycles);
}

/**
 * Runs a crash run (`run`: the mixed one, or the FIFO one) as a test's
 * settings ask against `target`, with load for `runMs` before most kills
 * (see KillCycleOptions), and reports as every kill test does: the
 * replay line first, progress lines on a long run, the figures at the end,
 * and the whole report as JSON where HOLDSHELF_CRASH_REPORT names a file.
 * Returns the report and the replay line for the test's assertion messages.
 */
export async function runReported<R extends { readonly violations: string[] }>(
  label: string,
  settings: CrashSettings,
  target: CrashTarget,
  run: (options: CrashRunOptions) => Promise<R>,
  runMs: CrashRunOptions["runMs"] = [100, 2000],
): Promise<{ report: R; replay: string }> {
  const replay = `replay with HOLDSHELF_CRASH_SEED=${settings.seed}`;
  console.log(`${label}: ${replay}`);
  const report = await run({
    target,
    seed: settings.seed,
    cycles: settings.cycles,
    minutes: settings.minutes,
    runMs,
    log: settings.minutes !== undefined || settings.cycles > 100 ? (line) => console.log(line) : () => undefined,
  });
  const { violations: _, ...figures } = report;
  console.log(`${label} figures: ${JSON.stringify(figures)}`);
  if (settings.reportFile) await writeFile(settings.reportFile, JSON.stringify(report, null, 2));
  return { report, replay };
}
