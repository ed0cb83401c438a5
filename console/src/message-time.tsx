// A moment as the message browser shows it: the full local date and time,
// in a <time> element whose datetime is the exact instant.
import { formatPreciseDateTime, isoOf } from "./date-time.js";

/** The time `epochMs`, or `never` when it is null. */
export function MessageTime({ epochMs, never = "never" }: { epochMs: number | null; never?: string }) {
  if (epochMs === null) return <>{never}</>;
  return <time dateTime={isoOf(epochMs)}>{formatPreciseDateTime(epochMs)}</time>;
}
