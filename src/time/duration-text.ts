// Durations as people type them, read the same way by the CLI's flags and the
// console (its form fields and its API): one parser, so "30" means 30 seconds
// wherever an operator types it. No imports: the console's page bundles this file.

const unitMs: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** What a duration may look like, for messages that say what to type. */
export const durationExamples = "30 (seconds), 500ms, 30s, 5m, 1h30m or 4d";

/**
 * Milliseconds of a duration such as "30" (a bare number is seconds),
 * "500ms", "0.5s", "5m", "12h", "4d", or parts in descending units such as
 * "1h30m" or "1m 30s"; undefined when the text is no such duration.
 * Fractions of a millisecond round to the nearest.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return safe(Number(trimmed) * 1000);
  const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d)\s*)+$/.test(trimmed)
    ? [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)]
    : [];
  if (parts.length === 0) return undefined;
  let total = 0;
  let previousUnit = Infinity;
  for (const [, amount, unit] of parts) {
    const ms = unitMs[unit!]!;
    // "30m1h" or "5s5s" is more likely a slip than a sum.
    if (ms >= previousUnit) return undefined;
    previousUnit = ms;
    total += Number(amount) * ms;
  }
  return safe(total);
}

/** Milliseconds rounded to whole ones; undefined past what a number holds exactly. */
function safe(ms: number): number | undefined {
  const rounded = Math.round(ms);
  return Number.isSafeInteger(rounded) ? rounded : undefined;
}

/** A whole number of milliseconds as the shortest text parseDuration reads back: "1h30m", "30s", "1s500ms", "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let rest = ms;
  let text = "";
  for (const unit of ["d", "h", "m", "s", "ms"] as const) {
    const size = unitMs[unit]!;
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
