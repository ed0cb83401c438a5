import { create } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { QueueConfigSchema, type QueueConfig as WireQueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import type { UpdateQueueRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { QueueConfigInput } from "../broker/queue-config.js";
import type { QueueConfigField } from "../broker/queue-config-update.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { queueConfigFromWire } from "./wire-convert.js";

/** QueueConfig's field names, the paths an update_mask may hold, and the broker's field each names. */
export const configFieldOfPath = {
  visibility_timeout: "visibilityTimeoutMs",
  delay: "delayMs",
  retention: "retentionMs",
  max_message_bytes: "maxMessageBytes",
  receive_wait_time: "receiveWaitTimeMs",
  max_in_flight: "maxInFlight",
  max_lease_duration: "maxLeaseDurationMs",
  redrive_policy: "redrivePolicy",
  retry_policy: "retryPolicy",
  tags: "tags",
  fifo: "fifo",
  content_based_deduplication: "contentBasedDeduplication",
  deduplication_scope: "deduplicationScope",
} as const satisfies Record<string, QueueConfigField>;

/** What an UpdateQueue asks the broker for: the configuration, and with a mask the fields to change. */
export interface QueueUpdate {
  readonly config: QueueConfigInput;
  /** Undefined: replace the whole configuration. */
  readonly fields: QueueConfigField[] | undefined;
}

/**
 * An UpdateQueue request for the broker. With a mask, only the fields it
 * names are read from the config (AIP-134), so a field left out is not even
 * checked; no mask, an empty one and "*" alone replace the whole
 * configuration. A path that names no field, a repeated one, or "*" beside
 * others is INVALID_ARGUMENT on update_mask.
 */
export function queueUpdateFromWire(request: UpdateQueueRequest): QueueUpdate {
  const paths = updateMaskPaths(request.updateMask);
  if (paths === undefined) return { config: queueConfigFromWire(request.config), fields: undefined };
  return {
    config: queueConfigFromWire(namedFieldsOf(request.config, paths)),
    fields: paths.map((path) => configFieldOfPath[path]),
  };
}

/** The mask's paths, checked; undefined when it names every field. */
function updateMaskPaths(mask: FieldMask | undefined): (keyof typeof configFieldOfPath)[] | undefined {
  const paths = mask?.paths ?? [];
  if (paths.length === 0 || (paths.length === 1 && paths[0] === "*")) return undefined;
  const seen = new Set<string>();
  for (const path of paths) {
    if (path === "*") throw invalidArgument("update_mask", `"*" names every field and must be the only path`);
    if (!Object.hasOwn(configFieldOfPath, path)) {
      throw invalidArgument("update_mask", `${JSON.stringify(path)} is not a field of QueueConfig`);
    }
    if (seen.has(path)) throw invalidArgument("update_mask", `${JSON.stringify(path)} is named twice`);
    seen.add(path);
  }
  return paths as (keyof typeof configFieldOfPath)[];
}

/** A copy of a wire configuration with only the named fields set. */
function namedFieldsOf(config: WireQueueConfig | undefined, paths: readonly string[]): WireQueueConfig {
  const named = create(QueueConfigSchema);
  if (config === undefined) return named;
  const source = reflect(QueueConfigSchema, config);
  const target = reflect(QueueConfigSchema, named);
  for (const field of QueueConfigSchema.fields) {
    if (paths.includes(field.name) && source.isSet(field)) target.set(field, source.get(field));
  }
  return named;
}
