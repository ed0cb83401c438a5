// The queue settings the console edits, described as proto/holdshelf/v1/queue.proto
// describes them: the label, the help a person needs, and the field path the
// broker names when it refuses a value.
import { durationExamples, formatDuration, parseDuration } from "../../src/time/duration-text.js";
import { numberOrText, wholeNumberProblem } from "./number-field.js";
import type { FifoSettings, QueueConfigJson } from "./api-types.js";

/** One editable setting of a queue's configuration. */
export interface ConfigField {
  /** The draft's key, and the control's id suffix. */
  readonly key: DraftKey;
  /** The proto path the broker's field violations use. */
  readonly path: string;
  readonly label: string;
  readonly kind: "duration" | "integer" | "text";
  /** The broker's default, shown in the empty input; none where empty means "none". */
  readonly defaultValue?: string;
  /** Bounds and default, from queue.proto. */
  readonly help: string;
}

/** A group of settings, shown as one fieldset. */
export interface ConfigGroup {
  readonly legend: string;
  /** Said once for the group, e.g. what leaving it empty means. */
  readonly note?: string;
  /** The path the broker uses for the whole group ("config.redrive_policy"). */
  readonly path?: string;
  readonly fields: readonly ConfigField[];
}

/** The form's values, as typed: every field a string, "" for unset. */
export interface ConfigDraft {
  visibilityTimeout: string;
  maxLeaseDuration: string;
  maxInFlight: string;
  receiveWaitTime: string;
  delay: string;
  retention: string;
  maxMessageBytes: string;
  deadLetterQueue: string;
  maxReceiveCount: string;
  minBackoff: string;
  maxBackoff: string;
  tags: { key: string; value: string }[];
  /** A FIFO queue: chosen at creation, then only shown (and sent back as it is, since the broker refuses a change). */
  fifo: boolean;
  contentBasedDeduplication: boolean;
  deduplicationScope: FifoSettings["deduplicationScope"];
}

/** A key of ConfigDraft that holds one text value. */
export type DraftKey = Exclude<keyof ConfigDraft, "tags" | "fifo" | "contentBasedDeduplication" | "deduplicationScope">;

/** The proto paths of the FIFO settings, as the broker's field violations name them. */
export const fifoPaths = {
  fifo: "config.fifo",
  contentBasedDeduplication: "config.content_based_deduplication",
  deduplicationScope: "config.deduplication_scope",
} as const;

/** The configuration form's groups, in the order an operator looks for them. */
export const configGroups: readonly ConfigGroup[] = [
  {
    legend: "Delivery",
    fields: [
      {
        key: "visibilityTimeout",
        defaultValue: "30s",
        path: "config.visibility_timeout",
        label: "Visibility timeout",
        kind: "duration",
        help: "How long a received message stays hidden from other consumers unless deleted. Default 30s; 0s up to the max lease duration.",
      },
      {
        key: "maxLeaseDuration",
        defaultValue: "12h",
        path: "config.max_lease_duration",
        label: "Max lease duration",
        kind: "duration",
        help: "The longest a lease may be held, however often it is extended. Default 12h; 1s to 7d.",
      },
      {
        key: "maxInFlight",
        defaultValue: "120000",
        path: "config.max_in_flight",
        label: "Max in flight",
        kind: "integer",
        help: "The most messages leased at once. Default 120000; 1 to 1000000.",
      },
      {
        key: "receiveWaitTime",
        defaultValue: "0s",
        path: "config.receive_wait_time",
        label: "Receive wait time",
        kind: "duration",
        help: "How long a Receive waits for a message when it names no wait time. Default 0s; up to 20s.",
      },
      {
        key: "delay",
        defaultValue: "0s",
        path: "config.delay",
        label: "Delivery delay",
        kind: "duration",
        help: "How long a sent message stays hidden before its first delivery. Default 0s; up to the retention. Applies to later sends.",
      },
    ],
  },
  {
    legend: "Storage",
    fields: [
      {
        key: "retention",
        defaultValue: "4d",
        path: "config.retention",
        label: "Retention",
        kind: "duration",
        help: "How long a message is kept, leased or not. Default 4d; 1m to 14d. Applies to stored messages too.",
      },
      {
        key: "maxMessageBytes",
        defaultValue: "1048576",
        path: "config.max_message_bytes",
        label: "Max message size (bytes)",
        kind: "integer",
        help: "The largest message accepted: body plus attributes. Default 1048576 (1 MiB); 1024 to 1048576. Queues created before 0.2.0 keep 262144 until it is set.",
      },
    ],
  },
  {
    legend: "Dead-letter queue (redrive policy)",
    note: "Where messages go that keep failing. Leave both empty for none: messages are then retried until their retention ends.",
    path: "config.redrive_policy",
    fields: [
      {
        key: "deadLetterQueue",
        path: "config.redrive_policy.dead_letter_queue",
        label: "Dead-letter queue",
        kind: "text",
        help: "The name of an existing queue other than this one.",
      },
      {
        key: "maxReceiveCount",
        path: "config.redrive_policy.max_receive_count",
        label: "Max receive count",
        kind: "integer",
        help: "Deliveries a message gets before it is dead-lettered; 1 to 1000. Required with a dead-letter queue.",
      },
    ],
  },
  {
    legend: "Retry backoff (retry policy)",
    note: "How long a message waits before its retry after a lease ran out: min backoff × 2^(receives − 1), at most max backoff. Leave both empty to retry at once.",
    path: "config.retry_policy",
    fields: [
      {
        key: "minBackoff",
        defaultValue: "0s",
        path: "config.retry_policy.min_backoff",
        label: "Min backoff",
        kind: "duration",
        help: "The first retry's wait; 0s to 12h.",
      },
      {
        key: "maxBackoff",
        defaultValue: "0s",
        path: "config.retry_policy.max_backoff",
        label: "Max backoff",
        kind: "duration",
        help: "The longest wait; from the min backoff to 12h. Required when the min backoff is over 0s.",
      },
    ],
  },
];

/** Every path the form has a place for: the fields, their groups, and the tags. */
export function isConfigPath(path: string): boolean {
  return (
    path === "config.tags" ||
    path.startsWith("config.tags[") ||
    Object.values(fifoPaths).some((fifoPath) => fifoPath === path) ||
    configGroups.some((group) => group.path === path || group.fields.some((field) => field.path === path))
  );
}

/** An empty draft: every setting left to the broker's default. */
export function emptyDraft(): ConfigDraft {
  return {
    visibilityTimeout: "",
    maxLeaseDuration: "",
    maxInFlight: "",
    receiveWaitTime: "",
    delay: "",
    retention: "",
    maxMessageBytes: "",
    deadLetterQueue: "",
    maxReceiveCount: "",
    minBackoff: "",
    maxBackoff: "",
    tags: [],
    fifo: false,
    contentBasedDeduplication: false,
    deduplicationScope: "queue",
  };
}

/** A queue's configuration as the form shows it; durations as an operator writes them ("12h", not "43200s"). */
export function draftOf(config: QueueConfigJson): ConfigDraft {
  const text = (value: string | number | undefined) => (value === undefined ? "" : String(value));
  const duration = (value: string | undefined) => {
    const ms = value === undefined ? undefined : parseDuration(value);
    return ms === undefined ? text(value) : formatDuration(ms);
  };
  return {
    visibilityTimeout: duration(config.visibilityTimeout),
    maxLeaseDuration: duration(config.maxLeaseDuration),
    maxInFlight: text(config.maxInFlight),
    receiveWaitTime: duration(config.receiveWaitTime),
    delay: duration(config.delay),
    retention: duration(config.retention),
    maxMessageBytes: text(config.maxMessageBytes),
    deadLetterQueue: text(config.redrivePolicy?.deadLetterQueue),
    maxReceiveCount: text(config.redrivePolicy?.maxReceiveCount),
    minBackoff: duration(config.retryPolicy?.minBackoff),
    maxBackoff: duration(config.retryPolicy?.maxBackoff),
    tags: Object.entries(config.tags ?? {}).map(([key, value]) => ({ key, value })),
    fifo: config.fifo === true,
    contentBasedDeduplication: config.contentBasedDeduplication === true,
    deduplicationScope: config.deduplicationScope === "DEDUPLICATION_SCOPE_MESSAGE_GROUP" ? "messageGroup" : "queue",
  };
}

/**
 * What the page itself refuses in a draft, before anything is sent: each
 * duration that is no duration and each number that is no whole number, all
 * at once, by the proto path the broker would name. The bounds are the
 * broker's to judge, so they live in one place.
 */
export function checkDraft(draft: ConfigDraft): Map<string, string> {
  const refused = new Map<string, string>();
  for (const group of configGroups) {
    for (const field of group.fields) {
      const text = draft[field.key].trim();
      if (text === "") {
        // A dead-letter queue needs its count; the broker would only say "between 1 and 1000".
        if (field.key === "maxReceiveCount" && draft.deadLetterQueue.trim() !== "")
          refused.set(field.path, "is required with a dead-letter queue: enter a whole number from 1 to 1000");
        continue;
      }
      if (field.kind === "duration" && parseDuration(text) === undefined)
        refused.set(field.path, `must be a duration such as ${durationExamples}`);
      if (field.kind === "integer") {
        const problem = wholeNumberProblem(text);
        if (problem !== null) refused.set(field.path, problem);
      }
    }
  }
  return refused;
}

/**
 * The configuration a draft asks for. Empty fields are left out, so the
 * broker applies its defaults; values are sent as typed (the console reads
 * durations as the CLI does) and the broker says which it refuses.
 */
export function configOf(draft: ConfigDraft): QueueConfigJson {
  const config: QueueConfigJson = {};
  const duration = (key: DraftKey) => draft[key].trim();
  const integer = (key: DraftKey) => numberOrText(draft[key]);
  for (const key of ["visibilityTimeout", "maxLeaseDuration", "receiveWaitTime", "delay", "retention"] as const) {
    if (duration(key) !== "") config[key] = duration(key);
  }
  for (const key of ["maxInFlight", "maxMessageBytes"] as const) {
    if (draft[key].trim() !== "") config[key] = integer(key);
  }
  if (draft.deadLetterQueue.trim() !== "" || draft.maxReceiveCount.trim() !== "") {
    config.redrivePolicy = {
      deadLetterQueue: draft.deadLetterQueue.trim(),
      maxReceiveCount: integer("maxReceiveCount"),
    };
  }
  if (duration("minBackoff") !== "" || duration("maxBackoff") !== "") {
    config.retryPolicy = {};
    if (duration("minBackoff") !== "") config.retryPolicy.minBackoff = duration("minBackoff");
    if (duration("maxBackoff") !== "") config.retryPolicy.maxBackoff = duration("maxBackoff");
  }
  const tags = draft.tags.filter((tag) => tag.key !== "" || tag.value !== "");
  if (tags.length > 0) config.tags = Object.fromEntries(tags.map((tag) => [tag.key, tag.value]));
  // A FIFO queue's settings go with every save: an update that left out fifo would ask to make the queue standard.
  if (draft.fifo) {
    config.fifo = true;
    config.contentBasedDeduplication = draft.contentBasedDeduplication;
    config.deduplicationScope =
      draft.deduplicationScope === "messageGroup" ? "DEDUPLICATION_SCOPE_MESSAGE_GROUP" : "DEDUPLICATION_SCOPE_QUEUE";
  }
  return config;
}

/**
 * The settings a draft changes from `base` (the configuration it was made
 * from), by QueueConfig's field names: what a save sends as its update
 * mask. A policy is one setting: either of its fields changes it whole.
 */
export function changedFields(base: ConfigDraft, draft: ConfigDraft): string[] {
  const changed = new Set<string>();
  for (const group of configGroups) {
    for (const field of group.fields) {
      // "config.redrive_policy.dead_letter_queue" is the field "redrive_policy".
      if (draft[field.key].trim() !== base[field.key].trim()) changed.add(field.path.split(".")[1]!);
    }
  }
  const tagsOf = (of: ConfigDraft) =>
    JSON.stringify(of.tags.filter((tag) => tag.key !== "" || tag.value !== "").map((tag) => [tag.key, tag.value]));
  if (tagsOf(draft) !== tagsOf(base)) changed.add("tags");
  if (draft.contentBasedDeduplication !== base.contentBasedDeduplication) changed.add("content_based_deduplication");
  if (draft.deduplicationScope !== base.deduplicationScope) changed.add("deduplication_scope");
  return [...changed];
}
