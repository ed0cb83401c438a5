import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** What a soak run does. */
export interface SoakOptions {
  readonly minutes: number;
  /** Messages per second the producers aim at. */
  readonly rate: number;
  /** Where the default rate came from (the benchmark peak in docs/performance.md), or "--rate". */
  readonly rateSource: string;
  readonly intervalSeconds: number;
  /** Rows inside the warm-up do not count for the verdict. */
  readonly warmupSeconds: number;
  readonly producers: number;
  readonly consumers: number;
  /** Consumers that hold each message for holdMs on a Heartbeat stream, renewing. */
  readonly heartbeatConsumers: number;
  readonly holdMs: number;
  /** Share of first deliveries the plain consumers do not delete: their leases run out and they come back. */
  readonly dropShare: number;
  /** Lease of the plain consumers: how long a dropped message stays away. */
  readonly leaseMs: number;
  readonly durability: "fsync" | "os";
}

/** The usage text of `npm run soak`. */
export const soakUsage = `npm run soak -- [flags]
  --minutes N             how long the load runs (default 5)
  --rate N                messages per second to send (default 70% of docs/performance.md's scenario 1 peak)
  --interval-seconds N    one row every N seconds (default 30)
  --warmup-seconds N      rows before this do not count for the verdict (default 60, at most half the run)
  --producers N           SendBatch 100 producers, paced (default 4)
  --consumers N           Receive 100 + DeleteBatch consumers (default 4)
  --heartbeat-consumers N consumers holding leases on Heartbeat streams (default 4)
  --hold-ms N             how long those hold each message, renewing every second (default 3000)
  --drop-share X          share of first deliveries left undeleted, to come back (default 0.02)
  --lease-ms N            the plain consumers' lease, i.e. when dropped messages return (default 5000)
  --durability fsync|os   the broker's durability (default fsync)`;

const performancePath = fileURLToPath(new URL("../../docs/performance.md", import.meta.url));
/** The share of the benchmark's peak rate the soak runs at by default. */
export const defaultRateShare = 0.7;

/** Parses the flags; throws an Error whose message says what is wrong. */
export function parseSoakOptions(args: string[]): SoakOptions {
  const { values } = parseArgs({
    args,
    options: {
      minutes: { type: "string", default: "5" },
      rate: { type: "string" },
      "interval-seconds": { type: "string", default: "30" },
      "warmup-seconds": { type: "string", default: "60" },
      producers: { type: "string", default: "4" },
      consumers: { type: "string", default: "4" },
      "heartbeat-consumers": { type: "string", default: "4" },
      "hold-ms": { type: "string", default: "3000" },
      "drop-share": { type: "string", default: "0.02" },
      "lease-ms": { type: "string", default: "5000" },
      durability: { type: "string", default: "fsync" },
    },
  });
  const minutes = positive("minutes", values.minutes);
  const runSeconds = minutes * 60;
  const intervalSeconds = positive("interval-seconds", values["interval-seconds"]);
  if (intervalSeconds * 2 > runSeconds)
    throw new Error("--interval-seconds: at most half the run, so that a row follows the warm-up");
  const dropShare = Number(values["drop-share"]);
  if (!(dropShare >= 0 && dropShare < 1)) throw new Error("--drop-share is a number from 0 to below 1");
  const durability = values.durability;
  if (durability !== "fsync" && durability !== "os") throw new Error("--durability is fsync or os");
  let rate: number;
  let rateSource: string;
  if (values.rate !== undefined) {
    rate = positive("rate", values.rate);
    rateSource = "--rate";
  } else {
    const peak = readBenchmarkPeak();
    rate = Math.round(peak * defaultRateShare);
    rateSource = `${defaultRateShare * 100}% of docs/performance.md's scenario 1 peak (${peak} msg/s)`;
  }
  return {
    minutes,
    rate,
    rateSource,
    intervalSeconds,
    warmupSeconds: Math.min(nonNegative("warmup-seconds", values["warmup-seconds"]), runSeconds / 2),
    producers: positive("producers", values.producers),
    consumers: positive("consumers", values.consumers),
    heartbeatConsumers: nonNegative("heartbeat-consumers", values["heartbeat-consumers"]),
    holdMs: positive("hold-ms", values["hold-ms"]),
    dropShare,
    leaseMs: positive("lease-ms", values["lease-ms"]),
    durability,
  };
}

/** Scenario 1's msg/s from the table in docs/performance.md: the benchmark's peak rate. */
export function readBenchmarkPeak(markdown = readFileSync(performancePath, "utf8")): number {
  const row = /^\| 1 batched pipeline[^|]*\| ([\d,]+) \|/m.exec(markdown);
  if (row === null) throw new Error("no scenario 1 row in the table of docs/performance.md: pass --rate");
  return Number(row[1]!.replaceAll(",", ""));
}

function positive(flag: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${flag} is a positive number, not "${text}"`);
  return value;
}

function nonNegative(flag: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${flag} is a number of 0 or more, not "${text}"`);
  return value;
}
