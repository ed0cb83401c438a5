import { durationExamples, parseDuration } from "../time/duration-text.js";
import { UsageError } from "./usage-error.js";

/** Parses a duration flag such as 500ms, 30s, 5m, 1h30m or 4d (a bare number is seconds) into milliseconds. */
export function parseDurationFlag(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`--${flag} takes a duration such as ${durationExamples}, not "${text}"`);
  return ms;
}
