import type { QueueConfig, QueueConfigInput } from "./queue-config.js";

/** A field of a queue's configuration that an update may name alone (AIP-134's update mask). */
export type QueueConfigField = keyof QueueConfigInput;

/**
 * The configuration an update asks for. Without `fields`, `input` is the
 * whole configuration (its unset fields take their defaults); with them,
 * `current` with only the named fields taken from `input`, where an unset
 * one takes its default. The registry calls this with the configuration
 * current when it takes the change, so updates of other fields made
 * meanwhile stay.
 */
export function mergeQueueConfig(
  current: QueueConfig,
  input: QueueConfigInput | undefined,
  fields: readonly QueueConfigField[] | undefined,
): QueueConfigInput {
  if (fields === undefined) return input ?? {};
  const merged: Record<string, unknown> = { ...configAsInput(current) };
  for (const field of fields) merged[field] = input?.[field];
  return merged as QueueConfigInput;
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
