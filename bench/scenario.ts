import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBrokerChild, type BrokerChild, type BrokerFlags } from "./broker-child.js";
import { readCommitCounters } from "./broker-scrape.js";
import type { TimeSpan } from "./cpu-profile-summary.js";
import { cpuPercent, monotonicMs, sampleProcess } from "./proc-stats.js";

/** Latency percentiles, in milliseconds. */
export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** One row of the benchmark table (a scenario may give more than one). */
export interface ScenarioResult {
  readonly scenario: string;
  /** Messages moved in the measured window (end to end unless the scenario says otherwise). */
  readonly messages: number;
  readonly seconds: number;
  readonly messagesPerSecond: number;
  /** Undefined where the scenario measures no latency. */
  readonly latencyMs: Percentiles | undefined;
  /** Group-commit batches (one fsync each in fsync durability) per second, and messages per batch. */
  readonly fsyncsPerSecond: number | undefined;
  readonly messagesPerFsync: number | undefined;
  /** Broker CPU over the window, as a percentage of one core, and its peak resident memory. */
  readonly brokerCpuPercent: number | undefined;
  /** CPU of this client process over the window: on 2 cores, it competes with the broker. */
  readonly clientCpuPercent?: number | undefined;
  /**
   * Broker CPU time (user plus system, all threads) over the window per message
   * the row moved, in microseconds; on a peer's row, the peer server's.
   */
  readonly brokerCpuMicrosPerMessage?: number | undefined;
  /** This client process's CPU time over the window per message the row moved, in microseconds. */
  readonly clientCpuMicrosPerMessage?: number | undefined;
  /** The 1-minute load average just before the scenario started (set by the runner). */
  readonly loadAverage?: number | undefined;
  readonly brokerPeakRssMb: number | undefined;
  /** Scenario-specific figures (ratios, counts, times), named. */
  readonly extra: Readonly<Record<string, number | string>>;
  /** Whether the target for this row is met, and what it was. */
  readonly target?: { readonly text: string; readonly met: boolean };
}

/** What a scenario is given. */
export interface ScenarioContext {
  /** The --size flag, or undefined for the scenario's default. */
  readonly size: number | undefined;
  readonly durability: "fsync" | "os";
  /** Results of scenarios that already ran in this invocation (the peers and scenario 9 read scenario 1's rate). */
  readonly earlier: readonly ScenarioResult[];
  /**
   * Starts a broker child process on a new temporary data directory, or on
   * `dataDir`; stopped after the scenario. Under --profile it runs with --cpu-prof.
   */
  startBroker(dataDir?: string, flags?: BrokerFlags): Promise<BenchBroker>;
  /** A temporary directory, removed after the scenario. */
  tempDir(): Promise<string>;
  /** A progress line on standard error. */
  log(line: string): void;
}

/** A broker child process a scenario drives. */
export interface BenchBroker extends BrokerChild {
  readonly dataDir: string;
  /** The measured windows run against it (measureWindow adds them): where its CPU profile is read. */
  readonly measured: TimeSpan[];
}

/** A broker a scenario ran, once stopped: its CPU profile (under --profile) and measured windows. */
export interface BrokerRun {
  readonly profilePath: string | undefined;
  readonly measured: readonly TimeSpan[];
}

/** One scenario of `npm run bench`. */
export interface Scenario {
  /** Its --scenario name. */
  readonly name: string;
  /** What --size means for it, and its default. */
  readonly sizeMeaning: string;
  readonly defaultSize: number;
  run(context: ScenarioContext): Promise<ScenarioResult[]>;
}

/** What the broker did during a measured window. */
export interface Window {
  readonly seconds: number;
  readonly fsyncs: number;
  readonly commits: number;
  readonly brokerCpuPercent: number;
  readonly clientCpuPercent?: number | undefined;
  /** Broker CPU time (user plus system) over the window, and this process's, in seconds. */
  readonly brokerCpuSeconds: number;
  readonly clientCpuSeconds?: number | undefined;
  readonly brokerPeakRssMb: number;
}

/**
 * Runs `work` as a measured window: the broker's and this process's CPU
 * time and the broker's group-commit counters before and after, and its
 * peak RSS (VmHWM) at the end. The window is recorded on the broker, for its
 * CPU profile.
 */
export async function measureWindow<T>(
  broker: BenchBroker,
  work: () => Promise<T>,
): Promise<{ window: Window; value: T }> {
  return measureBrokersWindow([broker], work);
}

/** measureWindow over several brokers at once: their CPU, fsyncs and peak RSS summed. */
export async function measureBrokersWindow<T>(
  brokers: readonly BenchBroker[],
  work: () => Promise<T>,
): Promise<{ window: Window; value: T }> {
  const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
  const before = brokers.map((broker) => sampleProcess(broker.pid));
  const commitsBefore = await Promise.all(brokers.map((broker) => readCommitCounters(broker.metricsAddress)));
  const clientBefore = process.cpuUsage();
  const startedMs = monotonicMs();
  const value = await work();
  const seconds = (monotonicMs() - startedMs) / 1000;
  const client = process.cpuUsage(clientBefore);
  const after = brokers.map((broker) => sampleProcess(broker.pid));
  brokers.forEach((broker, index) => {
    broker.measured.push({ fromMs: before[index]!.atMs, toMs: after[index]!.atMs });
  });
  const commitsAfter = await Promise.all(brokers.map((broker) => readCommitCounters(broker.metricsAddress)));
  const clientCpuSeconds = (client.user + client.system) / 1e6;
  return {
    value,
    window: {
      seconds,
      fsyncs: sum(commitsAfter.map((counters, index) => counters.batches - commitsBefore[index]!.batches)),
      commits: sum(commitsAfter.map((counters, index) => counters.commits - commitsBefore[index]!.commits)),
      brokerCpuPercent: sum(before.map((sample, index) => cpuPercent(sample, after[index]!))),
      clientCpuPercent: (100 * clientCpuSeconds) / seconds,
      brokerCpuSeconds: sum(before.map((sample, index) => after[index]!.cpuSeconds - sample.cpuSeconds)),
      clientCpuSeconds,
      brokerPeakRssMb: sum(brokers.map((broker) => peakRssBytes(broker.pid))) / 2 ** 20,
    },
  };
}

/** A result row from a window and the messages it moved. */
export function resultOf(
  scenario: string,
  messages: number,
  window: Window,
  latencyMs: Percentiles | undefined,
  extra: Record<string, number | string> = {},
): ScenarioResult {
  return {
    scenario,
    messages,
    seconds: window.seconds,
    messagesPerSecond: messages / window.seconds,
    latencyMs,
    fsyncsPerSecond: window.fsyncs / window.seconds,
    messagesPerFsync: window.fsyncs === 0 ? undefined : messages / window.fsyncs,
    brokerCpuPercent: window.brokerCpuPercent,
    clientCpuPercent: window.clientCpuPercent,
    brokerCpuMicrosPerMessage: microsPerMessage(window.brokerCpuSeconds, messages),
    clientCpuMicrosPerMessage:
      window.clientCpuSeconds === undefined ? undefined : microsPerMessage(window.clientCpuSeconds, messages),
    brokerPeakRssMb: window.brokerPeakRssMb,
    extra,
  };
}

/** CPU seconds per message, in microseconds (NaN for a window that moved none). */
export function microsPerMessage(cpuSeconds: number, messages: number): number {
  return messages === 0 ? NaN : (1e6 * cpuSeconds) / messages;
}

/** The row of a scenario that did not run, saying why. */
export function skippedRow(scenario: string, reason: string): ScenarioResult {
  return {
    scenario,
    messages: 0,
    seconds: NaN,
    messagesPerSecond: NaN,
    latencyMs: undefined,
    fsyncsPerSecond: undefined,
    messagesPerFsync: undefined,
    brokerCpuPercent: undefined,
    brokerPeakRssMb: undefined,
    extra: { skipped: reason },
  };
}

/** Percentiles of latencies in milliseconds (sorts its argument). */
export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: NaN, p99: NaN, p999: NaN, max: NaN };
  values.sort((a, b) => a - b);
  const at = (fraction: number): number => values[Math.min(values.length - 1, Math.floor(fraction * values.length))]!;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: values[values.length - 1]! };
}

/** The peak resident set size of a process so far (VmHWM), in bytes. */
export function peakRssBytes(pid: number): number {
  return sampleProcess(pid).peakRssBytes;
}

/** What createContext is given: the scenario's options, and whether to profile its brokers. */
export interface ContextOptions {
  readonly size: number | undefined;
  readonly durability: "fsync" | "os";
  readonly earlier: readonly ScenarioResult[];
  /** Runs every broker under --cpu-prof (--profile). */
  readonly profile: boolean;
}

/**
 * Creates the context a scenario runs in, and the cleanup that follows it;
 * the cleanup stops the brokers and resolves with what each one ran. Under
 * --profile the profiles are in the scenario's temporary directories: copy
 * them out before calling `removeTemp`.
 */
export function createContext(
  options: ContextOptions,
  log: (line: string) => void,
): { context: ScenarioContext; cleanup(): Promise<BrokerRun[]>; removeTemp(): Promise<void> } {
  const brokers: BenchBroker[] = [];
  const dirs: string[] = [];
  const tempDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), "holdshelf-bench-"));
    dirs.push(dir);
    return dir;
  };
  const context: ScenarioContext = {
    size: options.size,
    durability: options.durability,
    earlier: options.earlier,
    log,
    tempDir,
    async startBroker(dataDir, flags) {
      const dir = dataDir ?? (await tempDir());
      // A directory per broker: startBrokerChild takes the one .cpuprofile it finds there.
      const profileDir = options.profile ? await tempDir() : undefined;
      const child = await startBrokerChild({
        dataDir: dir,
        durability: options.durability,
        profileDir,
        extraFlags: flags,
      });
      // The first scrape of /metrics deoptimizes Node's hot stream code in
      // both processes (fetch and HTTP/1 meet it with new shapes), and the
      // recompiling that follows filled the first second of scenario 3's
      // window with half of its p99 deliveries. Scraped once here, before any
      // warm-up, it is done before a window opens.
      await readCommitCounters(child.metricsAddress);
      const broker: BenchBroker = { ...child, dataDir: dir, measured: [] };
      brokers.push(broker);
      return broker;
    },
  };
  return {
    context,
    async cleanup() {
      const runs: BrokerRun[] = [];
      for (const broker of brokers) {
        const profilePath = await broker.stop().catch(() => undefined);
        runs.push({ profilePath, measured: broker.measured });
      }
      return runs;
    },
    async removeTemp() {
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}
