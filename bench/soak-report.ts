import type { IntervalCounts } from "./soak-tally.js";

/** One row of a soak: what one interval did. */
export interface SoakRow {
  /** Seconds since the load started, at the end of the interval. */
  readonly atSeconds: number;
  /** Whether the row is inside the warm-up, and so outside the verdict. */
  readonly warmup: boolean;
  readonly sentPerSecond: number;
  /** Messages deleted per second: the rate achieved end to end. */
  readonly deletedPerSecond: number;
  /** Send-to-receive latency of first deliveries. */
  readonly latencyMs: { readonly count: number; readonly p50: number; readonly p99: number; readonly max: number };
  /** From the broker's /metrics: process_resident_memory_bytes and nodejs_heap_size_used_bytes, in MB. */
  readonly brokerRssMb: number;
  readonly brokerHeapUsedMb: number;
  readonly brokerCpuPercent: number;
  readonly clientCpuPercent: number;
  /** Messages stored in the soak queue at the end of the interval. */
  readonly backlog: number;
  readonly dropped: number;
  readonly redeliveries: number;
  readonly renewals: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly provoked: Readonly<Record<string, number>>;
}

/** Broker and client figures of an interval, read outside the clients. */
export interface IntervalReadings {
  readonly atSeconds: number;
  readonly seconds: number;
  readonly warmup: boolean;
  readonly brokerRssBytes: number;
  readonly brokerHeapUsedBytes: number;
  readonly brokerCpuPercent: number;
  readonly clientCpuPercent: number;
  readonly backlog: number;
}

/** One rule of the verdict, with the figures it compared. */
export interface SoakCheck {
  readonly name: string;
  readonly rule: string;
  readonly observed: string;
  readonly met: boolean;
}

/** Rules of the verdict, compared between the first row after the warm-up and the last row. */
export const verdictRules = {
  /** The last row's RSS may exceed the first post-warm-up row's by at most this share. */
  rssGrowth: 0.15,
  /** The last row's p99 may be at most this many times the first post-warm-up row's ... */
  p99Factor: 2,
  /** ... or this many milliseconds above it, whichever is more (a low p99 doubles on noise alone). */
  p99SlackMs: 50,
  /** The post-warm-up rate of deletes must reach this share of --rate. */
  rateShare: 0.95,
} as const;

/** A row from the clients' counts and the readings of the interval. */
export function rowOf(counts: IntervalCounts, readings: IntervalReadings): SoakRow {
  const latencies = counts.latenciesMs.sort((a, b) => a - b);
  const at = (fraction: number): number =>
    latencies[Math.min(latencies.length - 1, Math.floor(fraction * latencies.length))] ?? NaN;
  return {
    atSeconds: round(readings.atSeconds),
    warmup: readings.warmup,
    sentPerSecond: round(counts.sent / readings.seconds),
    deletedPerSecond: round(counts.deleted / readings.seconds),
    latencyMs: {
      count: latencies.length,
      p50: round(at(0.5), 2),
      p99: round(at(0.99), 2),
      max: round(latencies.at(-1) ?? NaN, 2),
    },
    brokerRssMb: round(readings.brokerRssBytes / 2 ** 20, 1),
    brokerHeapUsedMb: round(readings.brokerHeapUsedBytes / 2 ** 20, 1),
    brokerCpuPercent: round(readings.brokerCpuPercent),
    clientCpuPercent: round(readings.clientCpuPercent),
    backlog: readings.backlog,
    dropped: counts.dropped,
    redeliveries: counts.redeliveries,
    renewals: counts.renewals,
    errors: counts.errors,
    provoked: counts.provoked,
  };
}

/** The verdict over the rows and the run's totals. */
export function soakVerdict(
  rows: readonly SoakRow[],
  rate: number,
  totalErrors: Readonly<Record<string, number>>,
  totalProvoked: Readonly<Record<string, number>>,
): SoakCheck[] {
  const measured = rows.filter((row) => !row.warmup);
  const first = measured[0];
  const last = measured.at(-1);
  const errorCount = sum(totalErrors);
  const checks: SoakCheck[] = [
    {
      name: "no errors but provoked ones",
      rule: "0 failures other than the probe's TOO_MANY_IN_FLIGHT, over the whole run and the drain",
      observed: errorCount === 0 ? "0" : `${errorCount}: ${format(totalErrors)}`,
      met: errorCount === 0,
    },
    {
      name: "provoked errors seen",
      rule: "the probe's refusals were counted (the error accounting works)",
      observed: format(totalProvoked) || "none",
      met:
        sum(totalProvoked) > 0 &&
        Object.keys(totalProvoked).every((key) => key === "RESOURCE_EXHAUSTED TOO_MANY_IN_FLIGHT"),
    },
  ];
  if (first === undefined || last === undefined) {
    checks.push({ name: "rows after the warm-up", rule: "at least one", observed: "none", met: false });
    return checks;
  }
  const achieved = measured.reduce((total, row) => total + row.deletedPerSecond, 0) / measured.length;
  checks.push(
    {
      name: "rate held",
      rule: `deletes after the warm-up average >= ${verdictRules.rateShare * 100}% of --rate ${rate}/s`,
      observed: `${round(achieved)}/s (${round((100 * achieved) / rate)}%)`,
      met: achieved >= verdictRules.rateShare * rate,
    },
    {
      name: "memory flat",
      rule: `last row's broker RSS <= first post-warm-up row's + ${verdictRules.rssGrowth * 100}%`,
      observed: `${first.brokerRssMb} -> ${last.brokerRssMb} MB (${signedPercent(last.brokerRssMb / first.brokerRssMb)}); heap used ${first.brokerHeapUsedMb} -> ${last.brokerHeapUsedMb} MB`,
      met: last.brokerRssMb <= first.brokerRssMb * (1 + verdictRules.rssGrowth),
    },
    {
      name: "latency steady",
      rule: `last row's p99 <= max(${verdictRules.p99Factor} x, +${verdictRules.p99SlackMs} ms) the first post-warm-up row's`,
      observed: `${first.latencyMs.p99} -> ${last.latencyMs.p99} ms`,
      met:
        last.latencyMs.p99 <=
        Math.max(first.latencyMs.p99 * verdictRules.p99Factor, first.latencyMs.p99 + verdictRules.p99SlackMs),
    },
  );
  return checks;
}

/** The rows as a text table. */
export function formatRows(rows: readonly SoakRow[]): string {
  const header = [
    "t s",
    "sent/s",
    "deleted/s",
    "p50 ms",
    "p99 ms",
    "RSS MB",
    "heap MB",
    "broker CPU",
    "backlog",
    "dropped",
    "redelivered",
    "renewals",
    "errors",
    "provoked",
  ];
  const lines = rows.map((row) => [
    `${row.atSeconds}${row.warmup ? " (warm-up)" : ""}`,
    String(row.sentPerSecond),
    String(row.deletedPerSecond),
    String(row.latencyMs.p50),
    String(row.latencyMs.p99),
    String(row.brokerRssMb),
    String(row.brokerHeapUsedMb),
    `${row.brokerCpuPercent}%`,
    String(row.backlog),
    String(row.dropped),
    String(row.redeliveries),
    String(row.renewals),
    format(row.errors) || "0",
    String(sum(row.provoked)),
  ]);
  return table([header, ...lines]);
}

/** One row as it is logged while the soak runs. */
export function formatRowLine(row: SoakRow): string {
  return (
    `t ${row.atSeconds}s${row.warmup ? " (warm-up)" : ""}: ${row.sentPerSecond} sent/s, ${row.deletedPerSecond} deleted/s, ` +
    `p50 ${row.latencyMs.p50} ms, p99 ${row.latencyMs.p99} ms, RSS ${row.brokerRssMb} MB, heap ${row.brokerHeapUsedMb} MB, ` +
    `broker CPU ${row.brokerCpuPercent}%, backlog ${row.backlog}, dropped ${row.dropped}, redelivered ${row.redeliveries}, ` +
    `renewals ${row.renewals}, errors ${format(row.errors) || 0}, provoked ${sum(row.provoked)}`
  );
}

/** The verdict as text. */
export function formatVerdict(checks: readonly SoakCheck[]): string {
  const passed = checks.every((check) => check.met);
  const lines = checks.map(
    (check) => `  ${check.met ? "met   " : "MISSED"} ${check.name}: ${check.observed}  [rule: ${check.rule}]`,
  );
  return [`verdict: ${passed ? "PASS" : "FAIL"}`, ...lines].join("\n");
}

function table(cells: string[][]): string {
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) => row.map((cell, column) => cell.padStart(widths[column]!)).join("  ")).join("\n");
}

function sum(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((total, count) => total + count, 0);
}

function format(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .map(([key, count]) => `${key} x${count}`)
    .join(", ");
}

function signedPercent(ratio: number): string {
  const percent = round((ratio - 1) * 100, 1);
  return `${percent >= 0 ? "+" : ""}${percent}%`;
}

function round(value: number, digits = 0): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
