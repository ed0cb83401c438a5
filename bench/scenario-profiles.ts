import { copyFile } from "node:fs/promises";
import { join } from "node:path";
import { summarizeCpuProfile, type ProfileSummary } from "./cpu-profile-summary.js";
import type { BrokerRun } from "./scenario.js";

/** One broker's CPU profile from a scenario, kept in the run's profile directory and summarized. */
export interface ScenarioProfile {
  readonly scenario: string;
  readonly path: string;
  readonly summary: ProfileSummary;
}

/**
 * Copies the CPU profiles of a scenario's brokers into `dir`, as
 * `<scenario>.cpuprofile` (`<scenario>-<n>.cpuprofile`, in start order, when
 * it ran several), and summarizes the ones that matter: every broker with a
 * measured window, over its windows only; where none had one (restart), the
 * last broker started, over its whole run.
 */
export async function keepScenarioProfiles(
  scenario: string,
  runs: readonly BrokerRun[],
  dir: string,
): Promise<ScenarioProfile[]> {
  const profiled = runs.filter((run): run is BrokerRun & { profilePath: string } => run.profilePath !== undefined);
  const kept = await Promise.all(
    profiled.map(async (run, index) => {
      const path = join(dir, profiled.length === 1 ? `${scenario}.cpuprofile` : `${scenario}-${index + 1}.cpuprofile`);
      await copyFile(run.profilePath, path);
      return { path, measured: run.measured };
    }),
  );
  const measured = kept.filter((run) => run.measured.length > 0);
  const chosen = measured.length > 0 ? measured : kept.slice(-1);
  return Promise.all(
    chosen.map(async (run) => ({
      scenario,
      path: run.path,
      summary: await summarizeCpuProfile(run.path, run.measured),
    })),
  );
}

/** A profile's summary as printed after the table: the groups, then the top self-time frames. */
export function formatScenarioProfile(profile: ScenarioProfile): string {
  const { summary } = profile;
  const span = summary.windowed ? "measured window" : "whole run";
  return [
    `${profile.scenario}: holdshelf broker CPU profile (${span}, ${summary.busySamples} busy samples), ${profile.path}`,
    "  share of busy samples by group:",
    ...summary.byArea.map(({ area, percent }) => `    ${percent.toFixed(1).padStart(5)}%  ${area}`),
    `  top ${summary.topFunctions.length} frames by self time:`,
    ...summary.topFunctions.map(({ name, percent }) => `    ${percent.toFixed(1).padStart(5)}%  ${name}`),
  ].join("\n");
}
