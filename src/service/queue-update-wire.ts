import { create } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { QueueConfigSchema, type QueueConfig as WireQueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import type { UpdateQueueRequest } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { QueueConfigInput } from "../broker/queue-config.js";
import type { QueueConfigField, QueueConfigPath } from "../broker/queue-config-update.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import { queueConfigPathOf, type QueueConfigPathName } from "../protocol/queue-config-paths.js";
import { mapKeyPath, parseUpdateMaskPath } from "../protocol/update-mask-path.js";
import { queueConfigFromWire } from "./wire-convert.js";

/**
 * QueueConfig's field names, the paths an update_mask may hold, and the
 * broker's field each names: the shared table turned round, checked to
 * cover every field of the broker's configuration.
 */
export const configFieldOfPath = Object.fromEntries(
  Object.entries(queueConfigPathOf satisfies { readonly [K in QueueConfigField]-?: string }).map(([field, path]) => [
    path,
    field,
  ]),
) as { readonly [P in QueueConfigPathName]: QueueConfigField };

/** What an UpdateQueue asks the broker for: the configuration, and with a mask the fields (or tags) to change. */
export interface QueueUpdate {
  readonly config: QueueConfigInput;
  /** Undefined: replace the whole configuration. */
  readonly fields: QueueConfigPath[] | undefined;
}

/** A checked update_mask path: a QueueConfig field, or "tags" with one key. */
type MaskPath = { readonly field: keyof typeof configFieldOfPath; readonly key?: string | undefined };

/**
 * An UpdateQueue request for the broker. With a mask, only the fields it
 * names are read from the config (AIP-134), so a field left out is not even
 * checked; a path tags.<key> (AIP-161) reads that one tag, and the broker
 * sets or removes it. No mask, an empty one and "*" alone replace the whole
 * configuration. A path that names no field, a repeated one, "*" beside
 * others, or "tags" beside a path of one tag is INVALID_ARGUMENT on
 * update_mask.
 */
export function queueUpdateFromWire(request: UpdateQueueRequest): QueueUpdate {
  const paths = updateMaskPaths(request.updateMask);
  if (paths === undefined) return { config: queueConfigFromWire(request.config), fields: undefined };
  return {
    config: queueConfigFromWire(namedFieldsOf(request.config, paths)),
    fields: paths.map(({ field, key }) => (key === undefined ? configFieldOfPath[field] : { tag: key })),
  };
}

/** The mask's paths, checked; undefined when it names every field. */
function updateMaskPaths(mask: FieldMask | undefined): MaskPath[] | undefined {
  const paths = mask?.paths ?? [];
  if (paths.length === 0 || (paths.length === 1 && paths[0] === "*")) return undefined;
  const checked = paths.map(checkedPath);
  const seen = new Set<string>();
  for (const [index, { field, key }] of checked.entries()) {
    // One spelling per field or tag, whether its key was written bare or in backticks.
    const id = key === undefined ? field : mapKeyPath(field, key);
    if (seen.has(id)) throw invalidArgument("update_mask", `${JSON.stringify(paths[index])} is named twice`);
    seen.add(id);
  }
  if (seen.has("tags") && checked.some(({ key }) => key !== undefined)) {
    throw invalidArgument("update_mask", `"tags" names every tag and cannot be beside a path of one tag`);
  }
  return checked;
}

/** One path, checked: a field of QueueConfig, or tags.<key> with the key bare or in backticks. */
function checkedPath(path: string): MaskPath {
  if (path === "*") throw invalidArgument("update_mask", `"*" names every field and must be the only path`);
  const parsed = parseUpdateMaskPath(path);
  if (parsed === undefined) {
    throw invalidArgument(
      "update_mask",
      `${JSON.stringify(path)} is not a path: a key of tags is an identifier or in backticks, a backtick in it doubled`,
    );
  }
  if (!Object.hasOwn(configFieldOfPath, parsed.field)) {
    throw invalidArgument("update_mask", `${JSON.stringify(path)} is not a field of QueueConfig`);
  }
  if (parsed.key !== undefined && parsed.field !== "tags") {
    throw invalidArgument("update_mask", `${JSON.stringify(path)} names a part of a field; only tags has keys`);
  }
  return parsed as MaskPath;
}

/** A copy of a wire configuration with only the named fields and tags set. */
function namedFieldsOf(config: WireQueueConfig | undefined, paths: readonly MaskPath[]): WireQueueConfig {
  const named = create(QueueConfigSchema);
  if (config === undefined) return named;
  const source = reflect(QueueConfigSchema, config);
  const target = reflect(QueueConfigSchema, named);
  const whole = paths.filter(({ key }) => key === undefined).map(({ field }) => field as string);
  for (const field of QueueConfigSchema.fields) {
    if (whole.includes(field.name) && source.isSet(field)) target.set(field, source.get(field));
  }
  // A set: a mask of many tags against a config of many tags stays linear.
  const keys = new Set(paths.flatMap(({ key }) => (key === undefined ? [] : [key])));
  // fromEntries defines own properties: a tag named "__proto__" stays a tag.
  if (keys.size > 0) named.tags = Object.fromEntries(Object.entries(config.tags).filter(([key]) => keys.has(key)));
  return named;
}
