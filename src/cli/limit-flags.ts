import { defaultLimits, type HoldshelfLimits } from "../server/server-limits.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { UsageError } from "./usage-error.js";

interface LimitFlag {
  readonly flag: string;
  readonly env: string;
  readonly min: number;
  readonly max: number;
  readonly description: string;
}

const mebibyte = 1024 * 1024;

/** Each limit's flag, environment variable and accepted range. */
const limitFlags: { readonly [K in keyof HoldshelfLimits]: LimitFlag } = {
  // Under 1 MiB no message near the largest max_message_bytes (the default) could be sent; one of
  // exactly 1 MiB needs its framing too, and over SQS its encoding (docs/operations.md, Limits).
  maxRequestBytes: {
    flag: "max-request-bytes",
    env: "HOLDSHELF_MAX_REQUEST_BYTES",
    min: mebibyte,
    max: 256 * mebibyte,
    description: "largest request, in bytes (or NKiB, NMiB)",
  },
  maxStreamsPerConnection: {
    flag: "max-streams-per-connection",
    env: "HOLDSHELF_MAX_STREAMS_PER_CONNECTION",
    min: 1,
    max: 1_000_000,
    description: "calls open at once on one connection",
  },
  maxWaitingReceives: {
    flag: "max-waiting-receives",
    env: "HOLDSHELF_MAX_WAITING_RECEIVES",
    min: 1,
    max: 10_000_000,
    description: "Receive calls waiting for messages at once",
  },
  maxSubscribersPerQueue: {
    flag: "max-subscribers-per-queue",
    env: "HOLDSHELF_MAX_SUBSCRIBERS_PER_QUEUE",
    min: 1,
    max: 1_000_000,
    description: "Subscribe streams on one queue",
  },
  maxQueues: {
    flag: "max-queues",
    env: "HOLDSHELF_MAX_QUEUES",
    min: 1,
    max: 10_000_000,
    description: "queues on the broker",
  },
  maxStoredMessages: {
    flag: "max-stored-messages",
    env: "HOLDSHELF_MAX_STORED_MESSAGES",
    min: 1,
    max: 1_000_000_000,
    description: "messages stored over all queues",
  },
  maxDeduplicationIds: {
    flag: "max-deduplication-ids",
    env: "HOLDSHELF_MAX_DEDUPLICATION_IDS",
    min: 1,
    max: 1_000_000_000,
    description: "FIFO deduplication ids remembered over all queues",
  },
};

const limitKeys = Object.keys(limitFlags) as (keyof HoldshelfLimits)[];

/** The limit options (docs/operations.md "Limits"); unset ones take their defaults. */
export const limitOptionTable: OptionTable = Object.fromEntries(
  limitKeys.map((key) => {
    const { flag, env, description } = limitFlags[key];
    const value = key === "maxRequestBytes" ? "BYTES" : "N";
    return [flag, { type: "string", value, env, shownDefault: String(defaultLimits[key]), description }];
  }),
);

/** The parseArgs options of the limit flags, defaulting to their environment variables. */
export function limitFlagOptions(env: NodeJS.ProcessEnv): Record<string, { type: "string"; default?: string }> {
  return parserOptions(limitOptionTable, env) as Record<string, { type: "string"; default?: string }>;
}

/**
 * The limits the flags set; unset ones take their defaults. Numbers are whole,
 * with an optional KiB or MiB for --max-request-bytes. Throws UsageError.
 */
export function parseLimitFlags(values: Record<string, unknown>): HoldshelfLimits {
  const limits: { -readonly [K in keyof HoldshelfLimits]: number } = { ...defaultLimits };
  for (const key of limitKeys) {
    const { flag, env, min, max } = limitFlags[key];
    const text = values[flag];
    if (typeof text !== "string") continue;
    const value = parseCount(text, key === "maxRequestBytes");
    if (value === undefined || value < min || value > max) {
      const unit = key === "maxRequestBytes" ? " bytes (or NKiB, NMiB)" : "";
      throw new UsageError(`--${flag} (${env}) is a whole number from ${min} to ${max}${unit}, not "${text}"`);
    }
    limits[key] = value;
  }
  return limits;
}

function parseCount(text: string, sized: boolean): number | undefined {
  const match = /^(\d{1,15})(KiB|MiB)?$/.exec(text.trim());
  if (match === null || (match[2] !== undefined && !sized)) return undefined;
  return Number(match[1]) * (match[2] === "MiB" ? mebibyte : match[2] === "KiB" ? 1024 : 1);
}
