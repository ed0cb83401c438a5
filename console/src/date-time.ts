// Full dates for the message browser: a message may sit in a queue for days,
// so its times always say which day, and in which zone.

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** A moment to the millisecond, in local time with its date and UTC offset: "2026-12-05 14:03:22.123 UTC+01:00" (a message's times, told apart when close). */
export function formatPreciseDateTime(epochMs: number): string {
  const date = new Date(epochMs);
  const offset = -date.getTimezoneOffset();
  const zone = `UTC${offset < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)} ${zone}`;
}

/** The ISO 8601 form, for a <time> element's datetime. */
export const isoOf = (epochMs: number) => new Date(epochMs).toISOString();
