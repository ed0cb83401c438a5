import type { QueueConfig, QueueConfigInput } from "./queue-config.js";

/** A field of a queue's configuration that an update may name alone (AIP-134's update mask). */
export type QueueConfigField = keyof QueueConfigInput;

/** One tag an update names alone (AIP-161's map-key path tags.<key>): set from the input's tags, or removed when absent there. */
export interface QueueTagField {
  readonly tag: string;
}

/** What an update may name: a whole field, or one tag. */
export type QueueConfigPath = QueueConfigField | QueueTagField;

/**
 * The configuration an update asks for. Without `fields`, `input` is the
 * whole configuration (its unset fields take their defaults); with them,
 * `current` with only the named fields taken from `input`, where an unset
 * one takes its default, and each named tag set to the input's value of it
 * or removed when the input has none. The registry calls this with the
 * configuration current when it takes the change, so updates of other
 * fields or other tags made meanwhile stay.
 */
export function mergeQueueConfig(
  current: QueueConfig,
  input: QueueConfigInput | undefined,
  fields: readonly QueueConfigPath[] | undefined,
): QueueConfigInput {
  if (fields === undefined) return input ?? {};
  const merged: Record<string, unknown> = { ...configAsInput(current) };
  const tagFields: string[] = [];
  for (const field of fields) {
    if (typeof field === "string") merged[field] = input?.[field];
    else tagFields.push(field.tag);
  }
  if (tagFields.length > 0) merged["tags"] = withTags(merged["tags"] as QueueConfig["tags"], input?.tags, tagFields);
  return merged as QueueConfigInput;
}

/** `tags` with each named key taken from `input`: set where it has the key, removed where not. */
function withTags(
  tags: QueueConfig["tags"] | undefined,
  input: QueueConfigInput["tags"],
  keys: readonly string[],
): Record<string, string> {
  // A Map, so that a tag named "__proto__" is a tag like any other.
  const result = new Map(Object.entries(tags ?? {}));
  for (const key of keys) {
    if (input !== undefined && Object.hasOwn(input, key)) result.set(key, input[key]!);
    else result.delete(key);
  }
  return Object.fromEntries(result);
}

/** A resolved configuration as the input that resolves to it again. */
function configAsInput({ fifo, ...rest }: QueueConfig): QueueConfigInput {
  return {
    ...rest,
    fifo: fifo !== undefined,
    contentBasedDeduplication: fifo?.contentBasedDeduplication,
    deduplicationScope: fifo?.deduplicationScope,
  };
}
