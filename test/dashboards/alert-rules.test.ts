/**
 * The shipped monitoring files: dashboards/alerts.yml checked and unit-tested
 * by promtool, dashboards/holdshelf.json checked against the metric contract,
 * and the helpers that read both for tests against real Prometheus.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import {
  alertExpressions,
  dashboardExpressions,
  dashboardPanels,
  parseAlertRules,
  readDashboard,
  substituteVariables,
} from "./dashboard-queries.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

// The metric names the broker exports: a contract the dashboard and the alerts rely on.
const gauges = [
  "holdshelf_messages",
  "holdshelf_oldest_message_age_seconds",
  "holdshelf_queue_visibility_timeout_seconds",
  "holdshelf_heartbeat_streams",
];
const counters = [
  "holdshelf_messages_sent_total",
  "holdshelf_messages_received_total",
  "holdshelf_messages_redelivered_total",
  "holdshelf_messages_deleted_total",
  "holdshelf_messages_dead_lettered_total",
  "holdshelf_messages_deduplicated_total",
  "holdshelf_messages_expired_total",
  "holdshelf_leases_expired_total",
  "holdshelf_leases_extended_total",
  "holdshelf_leases_released_total",
  "holdshelf_empty_receives_total",
  "holdshelf_storage_commit_failures_total",
  "grpc_server_started_total",
  "grpc_server_handled_total",
  "grpc_server_msg_received_total",
  "grpc_server_msg_sent_total",
];
const histograms = [
  "holdshelf_message_processing_seconds",
  "holdshelf_message_queue_wait_seconds",
  "holdshelf_redelivery_lateness_seconds",
  "holdshelf_storage_commit_seconds",
  "holdshelf_storage_commit_batch_size",
  "grpc_server_handling_seconds",
];
const contractMetrics = new Set([
  ...gauges,
  ...counters,
  ...histograms.flatMap((name) => [`${name}_bucket`, `${name}_sum`, `${name}_count`]),
]);

const alertNames = [
  "HoldshelfMessagesDeadLettered",
  "HoldshelfOldestMessageTooOld",
  "HoldshelfRedeliveryRatioHigh",
  "HoldshelfProcessingNearVisibilityTimeout",
  "HoldshelfDown",
  "HoldshelfTargetMissing",
  "HoldshelfStorageCommitSlow",
  "HoldshelfStorageWritesFailing",
];

/** The broker's metric names an expression mentions. */
function brokerMetrics(expr: string): string[] {
  return [...expr.matchAll(/\b(?:holdshelf|grpc_server)_\w+/g)].map(([name]) => name);
}

const missing = missingCommands(["promtool"]);

/** Runs promtool in the repository; resolves with its exit code and everything it printed. */
function promtool(...args: string[]): Promise<{ code: number | string | null; output: string }> {
  return new Promise((resolve) => {
    execFile("promtool", args, { cwd: repoRoot }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? null) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe.skipIf(skipWithout(missing))("alert rules under promtool", () => {
  it.each([
    ["check", "rules", "dashboards/alerts.yml"],
    ["test", "rules", "dashboards/alerts.test.yml"],
  ])("promtool %s %s %s passes", async (...args) => {
    expect(missing, "not on PATH: install Prometheus's promtool (Debian: apt-get install prometheus)").toEqual([]);
    const { code, output } = await promtool(...args);
    expect(code, `promtool ${args.join(" ")} printed:\n${output}`).toBe(0);
  });
});

describe("dashboards/holdshelf.json", () => {
  const dashboard = readDashboard();
  // Rows only lay the panels out: they have a title but nothing to query or describe.
  const panels = dashboardPanels(dashboard).filter((panel) => panel.type !== "row");

  it("has a queue variable over the queues the broker reports", () => {
    const queue = dashboard.templating.list.find((variable) => variable.name === "queue");
    expect(queue).toMatchObject({ type: "query", multi: true, includeAll: true });
    expect(JSON.stringify(queue!.query)).toContain("label_values(holdshelf_messages, queue)");
  });

  it("gives every panel a title, a description and a query", () => {
    expect(panels.length).toBeGreaterThan(0);
    for (const panel of panels) {
      expect(panel.title, JSON.stringify(panel)).toBeTruthy();
      expect(panel.description, `panel "${panel.title}" has no description`).toBeTruthy();
      expect(
        panel.targets?.some((target) => Boolean(target.expr)),
        `panel "${panel.title}" has no query`,
      ).toBe(true);
    }
  });

  it("lays panels out without overlap, each with its own id", () => {
    const placed = dashboardPanels(dashboard);
    expect(new Set(placed.map((panel) => panel.id)).size).toBe(placed.length);
    for (const [i, a] of placed.entries()) {
      for (const b of placed.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `"${a.title}" and "${b.title}" overlap`).toBe(true);
      }
    }
  });

  it("queries only metrics of the contract", () => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        for (const name of brokerMetrics(target.expr ?? "")) {
          expect(contractMetrics, `panel "${panel.title}" queries ${name}`).toContain(name);
        }
      }
    }
  });
});

describe("dashboard and alert expressions for Prometheus", () => {
  it("replaces the Grafana variables a test can query with, and leaves others", () => {
    expect(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: ${queue} is Grafana's variable syntax, under test here
      substituteVariables('rate(x{queue=~"$queue"}[$__rate_interval]) + y{q=~"${queue}"}[$__interval] + z[$__range]'),
    ).toBe('rate(x{queue=~".*"}[1m]) + y{q=~".*"}[15s] + z[5m]');
    expect(substituteVariables("x[$__interval_ms] $other")).toBe("x[$__interval_ms] $other");
  });

  it("lists every dashboard query with no variable left", () => {
    const expressions = dashboardExpressions();
    const targetCount = dashboardPanels().reduce((count, panel) => count + (panel.targets?.length ?? 0), 0);
    expect(expressions).toHaveLength(targetCount);
    for (const { title, expr } of expressions) {
      expect(title).not.toBe("");
      expect(expr, `panel "${title}"`).not.toContain("$");
    }
  });

  it("lists every alert of alerts.yml with its whole expression", () => {
    const alerts = alertExpressions();
    expect(alerts.map((rule) => rule.alert)).toEqual(alertNames);
    expect(alerts.find((rule) => rule.alert === "HoldshelfDown")!.expr).toBe('up{job="holdshelf"} == 0');
    expect(alerts.find((rule) => rule.alert === "HoldshelfRedeliveryRatioHigh")!.expr).toMatch(
      // biome-ignore lint/correctness/noEmptyCharacterClassInRegex: [^] is "any character, newlines too"
      /^\(\n {2}sum by \(queue\) \(rate\(holdshelf_messages_redelivered_total\[15m\]\)\)\n[^]*>= 20$/,
    );
    for (const { alert, expr } of alerts) {
      for (const name of brokerMetrics(expr)) expect(contractMetrics, `alert ${alert} queries ${name}`).toContain(name);
    }
  });

  it("parses one-line and block expressions, and skips recording rules", () => {
    const rules = parseAlertRules(
      [
        "groups:",
        "  - name: g",
        "    rules:",
        "      - record: job:up:sum",
        "        expr: |",
        "          sum by (job) (up)",
        "      - alert: OneLine",
        "        expr: up == 0  # down",
        "        for: 1m",
        "      - alert: Block",
        "        expr: |-",
        "          sum(a)",
        "",
        "            / sum(b)",
        "        labels:",
        "          severity: page",
      ].join("\n"),
    );
    expect(rules).toEqual([
      { alert: "OneLine", expr: "up == 0" },
      { alert: "Block", expr: "sum(a)\n\n  / sum(b)" },
    ]);
  });

  it.each([
    ["a quoted expr", "- alert: A\n  expr: 'up == 0'"],
    ["a folded expr", "- alert: A\n  expr: >\n    up == 0"],
    ["an alert without expr", "- alert: A\n  for: 1m\n- alert: B\n  expr: up"],
    ["expr before alert", "- expr: up\n  alert: A"],
    ["an empty block", "- alert: A\n  expr: |\n  for: 1m"],
  ])("refuses %s rather than misread it", (_, text) => {
    expect(() => parseAlertRules(text)).toThrow();
  });
});
