import { spawnSync } from "node:child_process";

/** The commands of `commands` that are not on the PATH (neither `--version` nor `version` runs). */
export function missingCommands(commands: readonly string[]): string[] {
  const runs = (command: string, flag: string): boolean => spawnSync(command, [flag]).error === undefined;
  return commands.filter((command) => !runs(command, "--version") && !runs(command, "version"));
}

/**
 * Whether tests that need missing tools are skipped: locally they are, but
 * CI installs every tool (.ci/run sets CI=true), so there they run and fail.
 */
export function skipWithout(missing: readonly string[]): boolean {
  return missing.length > 0 && !process.env.CI;
}
