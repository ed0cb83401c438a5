/**
 * The shipped dashboard and alert rules against a real Prometheus scraping
 * a real broker under a small load: every dashboard expression returns data
 * through Prometheus's query API, every alert rule evaluates cleanly on real
 * series (and the dead-letter alert fires on a real move), and
 * `promtool check metrics` accepts what the broker exports.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { missingCommands, skipWithout } from "../support/required-tools.js";
import { openHeartbeatStream } from "../support/heartbeat-stream.js";
import { freePort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";
import { alertExpressions, alertsPath, dashboardExpressions } from "./dashboard-queries.js";

const missing = missingCommands(["prometheus", "promtool"]);
// How often Prometheus scrapes and evaluates rules here: often, so that a
// rate over a minute has several samples within seconds.
const intervalSeconds = 1;

/** A JSON answer of Prometheus's HTTP API. */
interface ApiAnswer<T> {
  status: "success" | "error";
  data: T;
  error?: string;
}
interface QueryData {
  resultType: string;
  result: { metric: Record<string, string>; value: [number, string] }[];
}
interface RulesData {
  groups: { rules: { name: string; health: string; lastError?: string; lastEvaluation: string; state?: string }[] }[];
}

describe.skipIf(skipWithout(missing))("dashboard and alerts on a real Prometheus", () => {
  let broker: GrpcHarness;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let removeDir: () => Promise<void>;
  let load: Promise<void>;
  let loading = true;

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${prometheusUrl}${path}`);
    const answer = (await response.json()) as ApiAnswer<T>;
    if (answer.status !== "success") throw new Error(`${path}: ${answer.error}`);
    return answer.data;
  };
  const query = (expr: string) => api<QueryData>(`/api/v1/query?query=${encodeURIComponent(expr)}`);

  beforeAll(async () => {
    expect(missing, "not on PATH (Debian: apt-get install prometheus)").toEqual([]);
    broker = await startGrpcHarness({ metricsListen: "127.0.0.1:0", durability: "os" });
    const dir = await makeTempDir("holdshelf-prometheus-");
    removeDir = dir.remove;
    const config = join(dir.path, "prometheus.yml");
    await writeFile(
      config,
      [
        "global:",
        `  scrape_interval: ${intervalSeconds}s`,
        `  evaluation_interval: ${intervalSeconds}s`,
        "rule_files:",
        `  - ${JSON.stringify(alertsPath)}`,
        "scrape_configs:",
        "  - job_name: holdshelf",
        "    static_configs:",
        `      - targets: [${JSON.stringify(broker.server.metricsAddress)}]`,
      ].join("\n"),
    );
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir.path, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    prometheus.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await eventually("Prometheus ready", async () => {
      if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
      expect((await fetch(`${prometheusUrl}/-/ready`)).status).toBe(200);
    });

    await createQueues(broker);
    // The dead-letter counter exists at 0 (from the redrive policy) in a
    // scrape before the move, so increase() sees the move as a change.
    await eventually("a scrape of the new queues", async () =>
      expect((await query('holdshelf_messages_dead_lettered_total{queue="risky"}')).result).toHaveLength(1),
    );
    await provokeEveryEvent(broker);
    load = (async () => {
      while (loading) await steadyTraffic(broker);
    })();
    // Rates over [1m] need two samples since the load began; wait for several.
    await eventually("scrapes under load", async () => {
      const [scrapes] = (await query('count_over_time(up{job="holdshelf"}[1m])')).result;
      expect(Number(scrapes?.value[1] ?? 0)).toBeGreaterThanOrEqual(5);
      const [deliveries] = (await query('increase(holdshelf_messages_received_total{queue="orders"}[1m])')).result;
      expect(Number(deliveries?.value[1] ?? 0)).toBeGreaterThan(0);
    });
  }, 60_000);

  afterAll(async () => {
    loading = false;
    await load;
    if (prometheus !== undefined && prometheus.exitCode === null) {
      prometheus.kill("SIGTERM");
      await once(prometheus, "exit");
    }
    await broker?.stop();
    await removeDir?.();
  });

  it("returns data for every expression of the dashboard", async () => {
    const empty: string[] = [];
    for (const { title, expr } of dashboardExpressions()) {
      const { result } = await query(expr);
      if (result.length === 0) empty.push(`${title}: ${expr}`);
    }
    expect(empty, "dashboard expressions with no data").toEqual([]);
  });

  it("evaluates every alert rule without error, on series that exist", async () => {
    await eventually("every rule evaluated", async () => {
      const rules = (await api<RulesData>("/api/v1/rules")).groups.flatMap((group) => group.rules);
      expect(rules.map((rule) => rule.name).sort()).toEqual(
        alertExpressions()
          .map((rule) => rule.alert)
          .sort(),
      );
      for (const rule of rules) {
        expect({ rule: rule.name, health: rule.health, error: rule.lastError ?? "" }).toEqual({
          rule: rule.name,
          health: "ok",
          error: "",
        });
      }
    });
    const missingInputs: string[] = [];
    for (const { alert, expr } of alertExpressions()) {
      await query(expr); // throws on an error
      // An alert's expression is empty while it does not fire; its inputs must not be.
      for (const metric of new Set(expr.match(/\b(?:holdshelf|grpc_server)_\w+|\bup\b/g) ?? [])) {
        if ((await query(metric)).result.length === 0) missingInputs.push(`${alert}: ${metric}`);
      }
    }
    expect(missingInputs, "alert inputs with no series").toEqual([]);
  });

  it("fires the dead-letter alert for a real move", async () => {
    await eventually("HoldshelfMessagesDeadLettered firing", async () => {
      const { alerts } = await api<{ alerts: { labels: Record<string, string>; state: string }[] }>("/api/v1/alerts");
      const fired = alerts.find((alert) => alert.labels.alertname === "HoldshelfMessagesDeadLettered");
      expect(fired?.state).toBe("firing");
      expect(fired?.labels).toMatchObject({ queue: "risky", dead_letter_queue: "risky-dlq", severity: "warning" });
    });
  });

  it("shows a producer's repeated FIFO sends on the Deduplicated sends panel", async () => {
    const panel = dashboardExpressions().find(({ title }) => title === "Deduplicated sends");
    expect(panel, "the dashboard has a Deduplicated sends panel").toBeDefined();
    const rates = Object.fromEntries(
      (await query(panel!.expr)).result.map(({ metric, value }) => [metric.queue, Number(value[1])]),
    );
    // steadyTraffic sends every ledger entry twice: one of each pair is deduplicated.
    expect(rates["ledger.fifo"]).toBeGreaterThan(0);
    expect(rates["orders"]).toBe(0);
  });

  it("exports metrics that promtool check metrics accepts", async () => {
    const exposition = await (await fetch(`http://${broker.server.metricsAddress}/metrics`)).text();
    const check = spawnSync("promtool", ["check", "metrics"], { input: exposition, encoding: "utf8" });
    expect({ status: check.status, problems: check.stdout + check.stderr }).toEqual({ status: 0, problems: "" });
  });
});

/**
 * Queues of a small deployment: a work queue, one that dead-letters on its
 * first expired lease, and a FIFO queue whose producer retries.
 */
async function createQueues(h: GrpcHarness): Promise<void> {
  await h.rpc.createQueue({ name: "orders", config: { visibilityTimeout: durationFromMs(5000) } });
  await h.rpc.createQueue({ name: "ledger.fifo", config: { fifo: true } });
  await h.rpc.createQueue({ name: "risky-dlq" });
  await h.rpc.createQueue({
    name: "risky",
    config: {
      visibilityTimeout: durationFromMs(300),
      redrivePolicy: { deadLetterQueue: "risky-dlq", maxReceiveCount: 1 },
    },
  });
}

/** Once each: a failed call, a heartbeat extension and release, a lease that expires and comes back, a dead-letter move. */
async function provokeEveryEvent(h: GrpcHarness): Promise<void> {
  await h.rpc.getQueue({ name: "missing" }).catch(() => undefined);
  await h.rpc.send({ queue: "risky", body: Buffer.from("poison") });
  await h.rpc.receive({ queue: "risky" });
  await h.rpc.sendBatch({ queue: "orders", entries: [{ body: Buffer.from("a") }, { body: Buffer.from("b") }] });
  const [held, released] = (
    await h.rpc.receive({ queue: "orders", maxMessages: 2, visibilityTimeout: durationFromMs(300) })
  ).messages;
  const stream = openHeartbeatStream(h.server.address);
  stream.send({
    queue: "orders",
    leases: [
      { receiptHandle: held!.receiptHandle },
      { receiptHandle: released!.receiptHandle, visibilityTimeout: durationFromMs(0) },
    ],
  });
  await stream.next();
  stream.end();
  await stream.closed;
  stream.close();
  // "released" is visible again now; take it with a short lease and let that run out.
  await h.rpc.receive({ queue: "orders", visibilityTimeout: durationFromMs(200) });
  await eventually("expired leases and the move", async () => {
    expect(h.server.broker.getQueue("risky-dlq").counts.visible).toBe(1);
    expect(h.server.broker.getQueue("orders").counts.visible).toBeGreaterThanOrEqual(1);
  });
}

let ledgerEntries = 0;

/**
 * One round of ordinary work: a batch sent, received and deleted, an empty
 * poll, and a FIFO entry sent twice (a producer retrying) and consumed.
 */
async function steadyTraffic(h: GrpcHarness): Promise<void> {
  const entry = {
    queue: "ledger.fifo",
    body: Buffer.from("entry"),
    messageGroupId: "account-1",
    deduplicationId: `entry-${++ledgerEntries}`,
  };
  await h.rpc.send(entry);
  await h.rpc.send(entry);
  const ledger = await h.rpc.receive({ queue: "ledger.fifo", maxMessages: 10 });
  for (const message of ledger.messages)
    await h.rpc.delete({ queue: "ledger.fifo", receiptHandle: message.receiptHandle });
  await h.rpc.sendBatch({
    queue: "orders",
    entries: Array.from({ length: 5 }, (_, i) => ({ body: Buffer.from(`m${i}`) })),
  });
  const { messages } = await h.rpc.receive({ queue: "orders", maxMessages: 10 });
  if (messages.length > 0) {
    await h.rpc.deleteBatch({ queue: "orders", receiptHandles: messages.map((message) => message.receiptHandle) });
  }
  await h.rpc.receive({ queue: "risky" });
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Retries `check` until it passes, for state that a separate process reaches in its own time. */
async function eventually(what: string, check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** A loopback port nobody listens on now. */
