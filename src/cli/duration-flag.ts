import { UsageError } from "./usage-error.js";

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration flag such as 500ms, 30s, 5m, 12h or 4d (a bare number is seconds) into milliseconds. */
export function parseDurationFlag(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new UsageError(`--${flag} takes a duration such as 500ms, 30s, 5m, 12h or 4d, not "${text}"`);
  return Math.round(Number(match[1]) * units[match[2] ?? "s"]!);
}
