import { invalidArgument } from "../errors/holdshelf-error.js";

const second = 1000;
const hour = 3600 * second;
const day = 24 * hour;

/** A queue's configuration, every field set. Durations are in milliseconds. */
export interface QueueConfig {
  readonly visibilityTimeoutMs: number;
  readonly delayMs: number;
  readonly retentionMs: number;
  readonly maxMessageBytes: number;
  readonly receiveWaitTimeMs: number;
  readonly maxInFlight: number;
  readonly maxLeaseDurationMs: number;
}

/** A configuration as a request gives it: an undefined field takes its default. */
export type QueueConfigInput = { readonly [K in keyof QueueConfig]?: number | undefined };

/** The configuration of a queue created with nothing set. */
export const defaultQueueConfig: QueueConfig = {
  visibilityTimeoutMs: 30 * second,
  delayMs: 0,
  retentionMs: 4 * day,
  maxMessageBytes: 262144,
  receiveWaitTimeMs: 0,
  maxInFlight: 120000,
  maxLeaseDurationMs: 12 * hour,
};

/** The longest a Receive may wait, whatever the queue says. */
export const maxReceiveWaitMs = 20 * second;

/** Fixed bounds of the fields whose bounds do not depend on other fields. */
const fixedBounds = {
  retentionMs: [60 * second, 14 * day],
  maxMessageBytes: [1024, 1048576],
  receiveWaitTimeMs: [0, maxReceiveWaitMs],
  maxInFlight: [1, 1000000],
  maxLeaseDurationMs: [1 * second, 7 * day],
} as const;

/** Proto field names, for field violations. */
const fieldNames: { readonly [K in keyof QueueConfig]: string } = {
  visibilityTimeoutMs: "visibility_timeout",
  delayMs: "delay",
  retentionMs: "retention",
  maxMessageBytes: "max_message_bytes",
  receiveWaitTimeMs: "receive_wait_time",
  maxInFlight: "max_in_flight",
  maxLeaseDurationMs: "max_lease_duration",
};

/**
 * Fills in defaults and checks every bound, naming the first bad field as
 * `<prefix><field>`. Throws INVALID_ARGUMENT.
 */
export function resolveQueueConfig(input: QueueConfigInput | undefined, prefix = "config."): QueueConfig {
  const config = { ...defaultQueueConfig };
  for (const key of Object.keys(defaultQueueConfig) as (keyof QueueConfig)[]) {
    const value = input?.[key];
    if (value !== undefined) config[key] = value;
  }
  const check = (key: keyof QueueConfig, min: number, max: number): void => {
    const value = config[key];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(prefix + fieldNames[key], `must be between ${describe(key, min)} and ${describe(key, max)}`);
    }
  };
  for (const key of Object.keys(fixedBounds) as (keyof typeof fixedBounds)[]) {
    const [min, max] = fixedBounds[key];
    check(key, min, max);
  }
  check("visibilityTimeoutMs", 0, config.maxLeaseDurationMs);
  check("delayMs", 0, config.retentionMs);
  return config;
}

/** Whether two resolved configurations are the same. */
export function sameQueueConfig(a: QueueConfig, b: QueueConfig): boolean {
  return (Object.keys(defaultQueueConfig) as (keyof QueueConfig)[]).every((key) => a[key] === b[key]);
}

function describe(key: keyof QueueConfig, value: number): string {
  return key.endsWith("Ms") ? `${value / second}s` : String(value);
}
