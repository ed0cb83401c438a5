import { cpuPercent, monotonicMs, sampleProcess, type ProcessSample } from "./proc-stats.js";
import { microsPerMessage, percentiles, type ScenarioResult } from "./scenario.js";

/** What a peer server and this client did while a measured pipeline ran through it. */
export interface PeerWindow<T> {
  readonly outcome: T;
  readonly seconds: number;
  /** The peer server's process before and after. */
  readonly before: ProcessSample;
  readonly after: ProcessSample;
  /** This process's CPU over the window: a peer's client may set the pace, not its server. */
  readonly clientCpuSeconds: number;
}

/** Runs `pipeline` as a measured window of the peer server process `pid`. */
export async function measurePeer<T>(pid: number, pipeline: () => Promise<T>): Promise<PeerWindow<T>> {
  const before = sampleProcess(pid);
  const clientBefore = process.cpuUsage();
  const startedMs = monotonicMs();
  const outcome = await pipeline();
  const seconds = (monotonicMs() - startedMs) / 1000;
  const after = sampleProcess(pid);
  const clientUsage = process.cpuUsage(clientBefore);
  return { outcome, seconds, before, after, clientCpuSeconds: (clientUsage.user + clientUsage.system) / 1e6 };
}

/** What a peer row says beyond its window. */
export interface PeerRowOptions {
  readonly scenario: string;
  /** The peer's name in the target, e.g. "JetStream". */
  readonly peer: string;
  readonly messages: number;
  readonly latencies: number[];
  /** holdshelf's rate on the same load in this run (scenario 1's for scenarios 7 and 8), and where it came from. */
  readonly holdshelf: { readonly rate: number; readonly source: string };
  readonly holdshelfDurability: string;
  /** How much faster than the peer holdshelf is meant to be; undefined where the issue sets no target against it. */
  readonly targetRatio: number | undefined;
  /** The peer's own figures: durability, acks, version, anything left over. */
  readonly extra: Readonly<Record<string, number | string>>;
}

/**
 * A peer's row: its rate, its server's CPU in the broker columns, this
 * client's CPU, and holdshelf's rate divided by the peer's against the
 * target, if there is one.
 */
export function peerRow<T>(window: PeerWindow<T>, options: PeerRowOptions): ScenarioResult {
  const { seconds, before, after, clientCpuSeconds } = window;
  const rate = options.messages / seconds;
  const ratio = options.holdshelf.rate / rate;
  return {
    scenario: options.scenario,
    messages: options.messages,
    seconds,
    messagesPerSecond: rate,
    latencyMs: percentiles(options.latencies),
    // Neither peer exposes group-commit counters the bench can compare.
    fsyncsPerSecond: undefined,
    messagesPerFsync: undefined,
    brokerCpuPercent: cpuPercent(before, after),
    clientCpuPercent: (100 * clientCpuSeconds) / seconds,
    brokerCpuMicrosPerMessage: microsPerMessage(after.cpuSeconds - before.cpuSeconds, options.messages),
    clientCpuMicrosPerMessage: microsPerMessage(clientCpuSeconds, options.messages),
    brokerPeakRssMb: after.peakRssBytes / 2 ** 20,
    extra: {
      holdshelfRate: options.holdshelf.rate,
      ratio,
      holdshelfFrom: options.holdshelf.source,
      holdshelfDurability: options.holdshelfDurability,
      ...options.extra,
    },
    ...(options.targetRatio === undefined
      ? {}
      : { target: { text: `>= ${options.targetRatio}x ${options.peer}`, met: ratio >= options.targetRatio } }),
  };
}
