/** How a crash run is sized, read from the environment (the long-form script sets these). */
export interface CrashSettings {
  readonly seed: number;
  readonly cycles: number;
  readonly minutes: number | undefined;
  /** Where to write the report as JSON, if anywhere. */
  readonly reportFile: string | undefined;
}

/** The short form CI runs: at least 20 kill cycles. */
export const ciCycles = 22;

/**
 * Reads HOLDSHELF_CRASH_SEED (replays a run), HOLDSHELF_CRASH_CYCLES,
 * HOLDSHELF_CRASH_MINUTES and HOLDSHELF_CRASH_REPORT; `defaults.cycles` is the
 * short form's length.
 */
export function crashSettingsFromEnv(
  env: NodeJS.ProcessEnv,
  defaults: { cycles: number } = { cycles: ciCycles },
): CrashSettings {
  const number = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not "${text}"`);
    return value;
  };
  return {
    seed: number("HOLDSHELF_CRASH_SEED") ?? Math.floor(Math.random() * 2 ** 32),
    cycles: number("HOLDSHELF_CRASH_CYCLES") ?? defaults.cycles,
    minutes: number("HOLDSHELF_CRASH_MINUTES"),
    reportFile: env["HOLDSHELF_CRASH_REPORT"] || undefined,
  };
}
