/**
 * Soak (not a test): a bounded run, minutes by default, at about 70% of the
 * benchmark's peak rate, that checks the broker holds steady under load.
 *
 * A `holdshelf serve` child process (fsync durability, a temporary data
 * directory) takes a paced load: producers send SendBatch 100 at --rate;
 * consumers Receive 100 and DeleteBatch, leaving a share of first deliveries
 * undeleted so that their leases run out and they come back (redeliveries);
 * heartbeat consumers hold their messages for seconds on Heartbeat streams,
 * renewing every second; a probe provokes TOO_MANY_IN_FLIGHT once a second,
 * so the run shows that its error accounting works. Every interval prints a
 * row (rates, send-to-receive latency, the broker's RSS and heap from its
 * /metrics, CPU, backlog, errors); at the end the queue is drained, every
 * message sent must have been deleted, and a verdict applies the rules in
 * soak-report.ts. The JSON goes to bench/results/.
 *
 * Run with `npm run soak -- [flags]`; see soakUsage.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { startBrokerChild, type BrokerChild } from "./broker-child.js";
import { requireValue, scrapeBroker } from "./broker-scrape.js";
import { cpuPercent, monotonicMs, sampleProcess } from "./proc-stats.js";
import { startSoakLoad } from "./soak-load.js";
import { parseSoakOptions, soakUsage, type SoakOptions } from "./soak-options.js";
import {
  formatRowLine,
  formatRows,
  formatVerdict,
  rowOf,
  soakVerdict,
  verdictRules,
  type SoakRow,
} from "./soak-report.js";
import { SoakTally } from "./soak-tally.js";
import { runEnvironment } from "./run-environment.js";

const resultsDir = fileURLToPath(new URL("../../bench/results/", import.meta.url));

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error);
  // Channels to a broker that is gone would keep retrying, and the process alive.
  process.exit(1);
}

async function main(): Promise<number> {
  if (process.argv.includes("--help")) {
    console.log(soakUsage);
    return 0;
  }
  let options: SoakOptions;
  try {
    options = parseSoakOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${soakUsage}`);
    return 2;
  }
  const log = (line: string): void => console.error(`[soak] ${line}`);
  log(
    `${options.minutes} min at ${options.rate} msg/s (${options.rateSource}), a row every ${options.intervalSeconds} s, warm-up ${options.warmupSeconds} s, ${options.durability}`,
  );
  const dataDir = await mkdtemp(join(tmpdir(), "holdshelf-soak-"));
  let broker: BrokerChild | undefined;
  try {
    broker = await startBrokerChild({ dataDir, durability: options.durability });
    const { rows, tally } = await runLoad(broker, options, log);
    const checks = soakVerdict(rows, options.rate, tally.total.errors, tally.total.provoked);
    await broker.stop();
    const passed = checks.every((check) => check.met);
    await mkdir(resultsDir, { recursive: true });
    const out = join(resultsDir, `soak-${new Date().toISOString().replaceAll(":", "-").replaceAll(".", "-")}.json`);
    const report = {
      ...runEnvironment(),
      options,
      rules: verdictRules,
      totals: { ...tally.total, latenciesMs: undefined },
      rows,
      verdict: { passed, checks },
    };
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\n${formatRows(rows)}\n\n${formatVerdict(checks)}\n\nwritten: ${out}`);
    return passed ? 0 : 1;
  } finally {
    await broker?.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Runs the load for --minutes, a row per interval, then drains. */
async function runLoad(
  broker: BrokerChild,
  options: SoakOptions,
  log: (line: string) => void,
): Promise<{ rows: SoakRow[]; tally: SoakTally }> {
  const tally = new SoakTally();
  const load = await startSoakLoad(broker.address, options, tally);
  const rows: SoakRow[] = [];
  const startedMs = monotonicMs();
  const endMs = startedMs + options.minutes * 60_000;
  let previous = { atMs: startedMs, broker: sampleProcess(broker.pid), client: process.cpuUsage() };
  while (previous.atMs < endMs - 1) {
    await sleep(Math.min(options.intervalSeconds * 1000, endMs - monotonicMs()));
    const now = { atMs: monotonicMs(), broker: sampleProcess(broker.pid), client: process.cpuUsage() };
    const samples = await scrapeBroker(broker.metricsAddress);
    const seconds = (now.atMs - previous.atMs) / 1000;
    const atSeconds = (now.atMs - startedMs) / 1000;
    const clientCpu = process.cpuUsage(previous.client);
    const row = rowOf(tally.takeInterval(), {
      atSeconds,
      seconds,
      // A row is warm-up if it began inside the warm-up (timer slack aside).
      warmup: (previous.atMs - startedMs) / 1000 < options.warmupSeconds - 0.5,
      brokerRssBytes: requireValue(samples, "process_resident_memory_bytes"),
      brokerHeapUsedBytes: requireValue(samples, "nodejs_heap_size_used_bytes"),
      brokerCpuPercent: cpuPercent(previous.broker, now.broker),
      clientCpuPercent: (clientCpu.user + clientCpu.system) / 1e4 / seconds,
      backlog: await load.backlog(),
    });
    rows.push(row);
    log(formatRowLine(row));
    previous = now;
  }
  log("draining");
  await load.stop();
  const drain = tally.takeInterval();
  // What the drain itself saw counts for the verdict through the totals; log its errors.
  if (Object.keys(drain.errors).length > 0) log(`errors in the drain: ${JSON.stringify(drain.errors)}`);
  return { rows, tally };
}
