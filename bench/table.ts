import { loadMarkThreshold } from "./machine-load.js";
import type { ScenarioResult } from "./scenario.js";

/** The results as a Markdown table, one row per result, with a legend and each row's extra figures after it. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header =
    "| Scenario | msg/s | broker µs/msg | client µs/msg | latency p50 / p99 / p99.9 ms | fsyncs/s | msg per fsync | broker CPU | client CPU | broker peak RSS | load | target |";
  const rule = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
  const rows = results.map((result) =>
    [
      result.scenario,
      optional(result.messagesPerSecond, whole),
      optional(result.brokerCpuMicrosPerMessage, fixed),
      optional(result.clientCpuMicrosPerMessage, fixed),
      result.latencyMs === undefined
        ? "–"
        : `${fixed(result.latencyMs.p50)} / ${fixed(result.latencyMs.p99)} / ${fixed(result.latencyMs.p999)}`,
      optional(result.fsyncsPerSecond, whole),
      optional(result.messagesPerFsync, fixed),
      optional(result.brokerCpuPercent, (value) => `${whole(value)}%`),
      optional(result.clientCpuPercent, (value) => `${whole(value)}%`),
      optional(result.brokerPeakRssMb, (value) => `${whole(value)} MB`),
      optional(result.loadAverage, (value) => `${value.toFixed(2)}${value > loadMarkThreshold ? " *" : ""}`),
      result.target === undefined ? "" : `${result.target.met ? "met" : "MISSED"}: ${result.target.text}`,
    ].join(" | "),
  );
  const legend = [
    "µs/msg: CPU time (user plus system, all threads) over the measured window per message moved. " +
      "On a peer's row the broker columns are the peer server's.",
    `load: the 1-minute load average before the scenario; * above ${loadMarkThreshold}, other work (or the previous scenario) shared the cores.`,
  ];
  const extras = results
    .filter((result) => Object.keys(result.extra).length > 0)
    .map(
      (result) =>
        `- ${result.scenario}: ${Object.entries(result.extra)
          .map(([key, value]) => `${key} ${typeof value === "number" ? fixed(value) : value}`)
          .join(", ")}`,
    );
  return [header, rule, ...rows.map((row) => `| ${row} |`), "", ...legend, "", ...extras].join("\n");
}

function optional(value: number | undefined, format: (value: number) => string): string {
  return value === undefined || Number.isNaN(value) ? "–" : format(value);
}

function whole(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function fixed(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return whole(value);
  return Math.abs(value) >= 100 ? whole(value) : value.toFixed(value >= 10 ? 1 : 2);
}
