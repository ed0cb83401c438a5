import type { ScenarioResult } from "./scenario.js";

/** The results as a Markdown table, one row per result, with each row's extra figures after it. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header = "| Scenario | msg/s | latency p50 / p99 / p99.9 ms | fsyncs/s | msg per fsync | broker CPU | client CPU | broker peak RSS | target |";
  const rule = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |";
  const rows = results.map((result) =>
    [
      result.scenario,
      whole(result.messagesPerSecond),
      result.latencyMs === undefined
        ? "–"
        : `${fixed(result.latencyMs.p50)} / ${fixed(result.latencyMs.p99)} / ${fixed(result.latencyMs.p999)}`,
      result.fsyncsPerSecond === undefined ? "–" : whole(result.fsyncsPerSecond),
      result.messagesPerFsync === undefined ? "–" : fixed(result.messagesPerFsync),
      result.brokerCpuPercent === undefined ? "–" : `${whole(result.brokerCpuPercent)}%`,
      result.clientCpuPercent === undefined ? "–" : `${whole(result.clientCpuPercent)}%`,
      result.brokerPeakRssMb === undefined ? "–" : `${whole(result.brokerPeakRssMb)} MB`,
      result.target === undefined ? "" : `${result.target.met ? "met" : "MISSED"}: ${result.target.text}`,
    ].join(" | "),
  );
  const extras = results
    .filter((result) => Object.keys(result.extra).length > 0)
    .map((result) => `- ${result.scenario}: ${Object.entries(result.extra).map(([key, value]) => `${key} ${typeof value === "number" ? fixed(value) : value}`).join(", ")}`);
  return [header, rule, ...rows.map((row) => `| ${row} |`), "", ...extras].join("\n");
}

function whole(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function fixed(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return whole(value);
  return Math.abs(value) >= 100 ? whole(value) : value.toFixed(value >= 10 ? 1 : 2);
}
