// The queue configuration of a console request, read field by field in the
// operator's words (issue #36: protobuf's decoder said "expected number
// (int32)" for an empty max receive count). Every field it cannot read is
// named at once; the values it reads go to the broker, which judges their
// bounds and names every field it refuses, also at once.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { DeduplicationScopeSchema, QueueConfigSchema, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { durationExamples, parseDuration } from "../time/duration-text.js";
import { consoleErrors, fieldReasons, type ConsoleFieldError } from "./console-error.js";

type Init = MessageInitShape<typeof QueueConfigSchema>;
/** Reads one value, or records why it cannot; `at` is its proto path. */
type Reader = (value: unknown, at: string, refuse: Refuse) => unknown;
type Refuse = (at: string, reason: string, message: string) => undefined;

const int32Max = 2 ** 31 - 1;

/**
 * A duration: text as the CLI reads it ("30" is seconds; "500ms", "5m",
 * "1h30m"; protobuf's "0.500s" too). A JSON number is refused, as protobuf's
 * JSON refuses it: 5 could mean seconds or milliseconds.
 */
const duration: Reader = (value, at, refuse): Duration | undefined => {
  const ms = typeof value === "string" ? parseDuration(value) : undefined;
  if (value === "") return refuse(at, fieldReasons.required, `is empty: enter a duration such as ${durationExamples}`);
  if (ms === undefined) return refuse(at, fieldReasons.notADuration, `must be a duration such as ${durationExamples}`);
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 } as Duration;
};

/** A whole number, as a JSON number or as text of digits. */
const wholeNumber: Reader = (value, at, refuse) => {
  const text = typeof value === "string" ? value.trim() : undefined;
  if (text === "") return refuse(at, fieldReasons.required, "is empty: enter a whole number");
  const number = text === undefined ? value : /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (typeof number !== "number" || !Number.isInteger(number))
    return refuse(at, fieldReasons.notAWholeNumber, "must be a whole number");
  if (Math.abs(number) > int32Max)
    return refuse(at, fieldReasons.notAWholeNumber, `must be a whole number of at most ${int32Max}`);
  return number;
};

const text: Reader = (value, at, refuse) =>
  typeof value === "string" ? value : refuse(at, fieldReasons.wrongType, "must be text");

const flag: Reader = (value, at, refuse) =>
  typeof value === "boolean" ? value : refuse(at, fieldReasons.wrongType, "must be true or false");

// protobuf's JSON names of DeduplicationScope's values, and their numbers.
const scopeNumbers = new Map(DeduplicationScopeSchema.values.map((value) => [value.name, value.number]));

/** One of DeduplicationScope's names, or its number (whose meaning the broker judges). */
const deduplicationScope: Reader = (value, at, refuse) => {
  if (typeof value === "string" && scopeNumbers.has(value)) return scopeNumbers.get(value);
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= int32Max) return value;
  return refuse(
    at,
    fieldReasons.notAChoice,
    `must be one of ${[...scopeNumbers.keys()].map((name) => `"${name}"`).join(", ")}`,
  );
};

const tags: Reader = (value, at, refuse) => {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return refuse(at, fieldReasons.wrongType, "must be an object of text values");
  // No prototype: a tag may be called "__proto__", and must be kept as one.
  const map: Record<string, string> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string") map[key] = item;
    else refuse(`${at}[${JSON.stringify(key.slice(0, 60))}]`, fieldReasons.wrongType, "must be text");
  }
  return map;
};

/** A message's fields by JSON name: its proto name and reader. */
type Fields = Readonly<Record<string, readonly [proto: string, read: Reader]>>;

/** A nested message of `fields`. */
const message =
  (fields: Fields): Reader =>
  (value, at, refuse) =>
    readMessage(value, at, fields, refuse);

const configFields: Fields = {
  visibilityTimeout: ["visibility_timeout", duration],
  delay: ["delay", duration],
  retention: ["retention", duration],
  maxMessageBytes: ["max_message_bytes", wholeNumber],
  receiveWaitTime: ["receive_wait_time", duration],
  maxInFlight: ["max_in_flight", wholeNumber],
  maxLeaseDuration: ["max_lease_duration", duration],
  redrivePolicy: [
    "redrive_policy",
    message({
      deadLetterQueue: ["dead_letter_queue", text],
      maxReceiveCount: ["max_receive_count", wholeNumber],
    }),
  ],
  retryPolicy: [
    "retry_policy",
    message({ minBackoff: ["min_backoff", duration], maxBackoff: ["max_backoff", duration] }),
  ],
  tags: ["tags", tags],
  fifo: ["fifo", flag],
  contentBasedDeduplication: ["content_based_deduplication", flag],
  deduplicationScope: ["deduplication_scope", deduplicationScope],
  accessPolicy: ["access_policy", text],
  sqsEncryption: [
    "sqs_encryption",
    message({
      kmsMasterKeyId: ["kms_master_key_id", text],
      kmsDataKeyReusePeriod: ["kms_data_key_reuse_period", duration],
      sqsManagedSseEnabled: ["sqs_managed_sse_enabled", flag],
    }),
  ],
};

/**
 * The fields of a JSON object by `fields`, each under its JSON name (or its
 * proto name, as protobuf's JSON also takes); null or a missing key leaves a
 * field unset. Records every field it cannot read, and every unknown key.
 */
function readMessage(value: unknown, at: string, fields: Fields, refuse: Refuse): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return refuse(at, fieldReasons.wrongType, "must be an object");
  const read: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const name = Object.hasOwn(fields, key)
      ? key
      : Object.keys(fields).find((jsonName) => fields[jsonName]![0] === key);
    // A key named in the path when it is short and plain; else the message it is in.
    if (name === undefined) {
      refuse(/^[\w-]{1,60}$/.test(key) ? `${at}.${key}` : at, fieldReasons.unknownField, "is not a queue setting");
      continue;
    }
    if (item === null) continue;
    const [proto, reader] = fields[name]!;
    const result = reader(item, `${at}.${proto}`, refuse);
    if (result !== undefined) read[name] = result;
  }
  return read;
}

/**
 * A queue configuration from a console request's JSON (protobuf's JSON form
 * of QueueConfig, with durations as the CLI reads them). Throws one
 * INVALID_ARGUMENT naming every field it cannot read, in the operator's words.
 */
export function queueConfigOf(json: unknown): QueueConfig {
  if (json === undefined || json === null) return create(QueueConfigSchema);
  const refused: ConsoleFieldError[] = [];
  const refuse: Refuse = (field, reason, text) => {
    refused.push({ field, reason, message: text });
    return undefined;
  };
  const init = readMessage(json, "config", configFields, refuse);
  if (refused.length > 0) throw consoleErrors.invalidFields(refused);
  return create(QueueConfigSchema, init as Init);
}
