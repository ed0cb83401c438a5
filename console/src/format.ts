// How the console writes numbers, ages, rates and times for people.

const counts = new Intl.NumberFormat("en");

/** A message count with thousands separators: "12,345". */
export function formatCount(count: number): string {
  return counts.format(count);
}

/** An age or span in at most two units, the second left out when 0: "850 ms", "12.3 s", "30 s", "4m 12s", "5m", "3h 05m", "2d 4h". */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.floor(ms / 100) / 10} s`;
  const seconds = Math.floor(ms / 1000);
  const [days, hours, minutes] = [
    Math.floor(seconds / 86400),
    Math.floor(seconds / 3600) % 24,
    Math.floor(seconds / 60) % 60,
  ];
  if (days > 0) return hours === 0 ? `${days}d` : `${days}d ${hours}h`;
  if (hours > 0) return minutes === 0 ? `${hours}h` : `${hours}h ${String(minutes).padStart(2, "0")}m`;
  return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m ${seconds % 60}s`;
}

/** Messages a second: "0/s", "0.25/s", "3.2/s", "1,204/s". */
export function formatRate(perSecond: number): string {
  if (perSecond === 0) return "0/s";
  if (perSecond < 1) return `${perSecond.toFixed(2)}/s`;
  if (perSecond < 100) return `${perSecond.toFixed(1)}/s`;
  return `${counts.format(Math.round(perSecond))}/s`;
}

/** A moment in local time, with the date unless it is today: "14:03:22" or "2024-05-01 14:03:22". */
export function formatTime(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  if (date.toDateString() === new Date().toDateString()) return time;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

/** A moment in local time, always with its date: "2024-05-01 14:03:22". */
export function formatDateTime(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${formatClock(epochMs, true)}`;
}

/** A time of day for a chart's axis: "14:03" or, with `seconds`, "14:03:20". */
export function formatClock(epochMs: number, seconds: boolean): string {
  const date = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  const minutes = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return seconds ? `${minutes}:${pad(date.getSeconds())}` : minutes;
}

/** How long before `now` a moment was: "just now", "12 s ago", "4m 12s ago" (a moment after `now`, from a clock ahead, is "just now"). */
export function formatAgo(epochMs: number, now: number): string {
  const ms = now - epochMs;
  if (ms < 1000) return "just now";
  if (ms < 60_000) return `${Math.floor(ms / 1000)} s ago`;
  return `${formatAge(ms)} ago`;
}

/**
 * An averaging window for a label: "10 s", "5 min", "1 h", "90 s". The
 * window is first rounded to whole `stepMs` (a sample interval): sample
 * times jitter, and a row's 299.87 s window is the same 30 samples as the
 * heading's 5 min.
 */
export function formatWindow(windowMs: number, stepMs = 1000): string {
  const ms = Math.round(windowMs / stepMs) * stepMs;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** A byte count: "512 B", "4.0 KiB", "1.0 MiB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A count and its noun: "1 queue", "42 messages". */
export function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;
}
