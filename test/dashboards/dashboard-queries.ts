import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The shipped Grafana dashboard and Prometheus alerting rules. */
export const dashboardPath = fileURLToPath(new URL("../../dashboards/holdshelf.json", import.meta.url));
export const alertsPath = fileURLToPath(new URL("../../dashboards/alerts.yml", import.meta.url));

/** The parts of a Grafana panel the tests look at. */
export interface DashboardPanel {
  readonly type: string;
  readonly id: number;
  /** Where Grafana draws the panel, in grid cells: 24 wide, rows of any height. */
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number };
  readonly title?: string;
  readonly description?: string;
  readonly targets?: readonly { readonly expr?: string }[];
  /** A collapsed row holds its panels here. */
  readonly panels?: readonly DashboardPanel[];
}

/** The parts of the dashboard the tests look at. */
export interface Dashboard {
  readonly templating: {
    readonly list: readonly { readonly name: string; readonly type: string; readonly query?: unknown }[];
  };
  readonly panels: readonly DashboardPanel[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(dashboardPath, "utf8")) as Dashboard;
}

/** Every panel of the dashboard, rows and the panels of collapsed rows included. */
export function dashboardPanels(dashboard: Dashboard = readDashboard()): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

// What a test against real Prometheus puts in place of Grafana's variables.
const variableValues: Record<string, string> = {
  queue: ".*",
  __rate_interval: "1m",
  __interval: "15s",
  __range: "5m",
};

/** Puts `variableValues` in place of `$name` and `${name}`; leaves other variables as Grafana would. */
export function substituteVariables(expr: string): string {
  return expr.replace(
    /\$(?:\{(\w+)\}|(\w+))/g,
    (match, braced: string | undefined, bare: string | undefined) => variableValues[braced ?? bare!] ?? match,
  );
}

/** Every target expression of the dashboard, ready to send to Prometheus. */
export function dashboardExpressions(): { title: string; expr: string }[] {
  return dashboardPanels().flatMap((panel) =>
    (panel.targets ?? []).flatMap((target) =>
      target.expr === undefined ? [] : [{ title: panel.title ?? "", expr: substituteVariables(target.expr) }],
    ),
  );
}

/** Every alerting rule of dashboards/alerts.yml with its expression. */
export function alertExpressions(): { alert: string; expr: string }[] {
  return parseAlertRules(readFileSync(alertsPath, "utf8"));
}

/**
 * Reads the alerting rules out of a Prometheus rules file without a YAML
 * library. It understands the shape alerts.yml keeps: `- alert: Name` and
 * then `expr:` with either a plain one-line value or a `|` block. Anything
 * else throws rather than being misread.
 */
export function parseAlertRules(text: string): { alert: string; expr: string }[] {
  const lines = text.split(/\r?\n/);
  const rules: { alert: string; expr: string }[] = [];
  let alert: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const start = /^\s*-\s+(alert|record):\s*([\w:]+)\s*$/.exec(line);
    if (start) {
      if (alert !== undefined) throw new Error(`alert ${alert} has no expr`);
      alert = start[1] === "alert" ? start[2]! : undefined;
      continue;
    }
    if (/^\s*(?:-\s+)?(?:alert|record):|^\s*-\s+expr:/.test(line)) {
      throw new Error(
        `line ${i + 1}: start each rule with "- alert: Name" and put expr after it, not ${JSON.stringify(line.trim())}`,
      );
    }
    const key = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!key || alert === undefined) continue;
    const indent = key[1]!.length;
    const value = key[2]!;
    let expr: string;
    if (/^\|[-+]?\s*$/.test(value)) {
      // A literal block: the lines indented deeper than `expr:`, blank ones included.
      const block: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === "" || leadingSpaces(lines[i + 1]!) > indent))
        block.push(lines[++i]!);
      const depth = Math.min(...block.filter((l) => l.trim() !== "").map(leadingSpaces));
      expr = block
        .map((l) => l.slice(depth))
        .join("\n")
        .trim();
    } else if (/^['"{[>&*!%@`]/.test(value)) {
      throw new Error(`alert ${alert}: write expr as one plain line or a | block, not ${JSON.stringify(value)}`);
    } else {
      // In a plain YAML value, " #" starts a comment.
      expr = value.replace(/\s+#.*$/, "").trim();
    }
    if (expr === "") throw new Error(`alert ${alert} has an empty expr`);
    rules.push({ alert, expr });
    alert = undefined;
  }
  if (alert !== undefined) throw new Error(`alert ${alert} has no expr`);
  return rules;
}

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}
