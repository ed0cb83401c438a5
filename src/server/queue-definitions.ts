import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { QueueConfigSchema, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";

/** The version of the queue definitions format this holdshelf reads and writes. */
export const queueDefinitionsVersion = 1;

/** One queue of a definitions file: its name and its configuration as the file gives it. */
export interface QueueDefinition {
  readonly name: string;
  readonly config: QueueConfig;
}

/** A definitions file that cannot be used, or one that cannot be applied to the broker as it stands; nothing was changed. */
export class QueueDefinitionsError extends Error {
  override readonly name = "QueueDefinitionsError";
}

/**
 * Reads a queue definitions document: `{"version": 1, "queues": [{"name",
 * "config"}]}`, each config in protobuf's JSON mapping of QueueConfig
 * (durations as "30s"). Unknown keys are refused, at every level, so a typo
 * is not silently a default. Throws QueueDefinitionsError naming `source`.
 */
export function parseQueueDefinitions(text: string, source: string): QueueDefinition[] {
  const fail = (message: string): never => {
    throw new QueueDefinitionsError(`${source}: ${message}`);
  };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return fail(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isObject(document)) return fail('not a queue definitions document: expected {"version": 1, "queues": [...]}');
  checkKeys(document, ["version", "queues"], "the document", fail);
  if (document.version !== queueDefinitionsVersion)
    fail(`version ${JSON.stringify(document.version)} is not one this holdshelf reads (${queueDefinitionsVersion})`);
  if (!Array.isArray(document.queues)) return fail('"queues" must be an array');
  const seen = new Set<string>();
  return document.queues.map((entry: unknown, index): QueueDefinition => {
    const where = `queues[${index}]`;
    if (!isObject(entry)) return fail(`${where} must be an object with "name" and "config"`);
    checkKeys(entry, ["name", "config"], where, fail);
    const { name } = entry;
    if (typeof name !== "string" || name === "") return fail(`${where}.name must be a queue name`);
    if (seen.has(name)) fail(`${where}: queue "${name}" is defined twice`);
    seen.add(name);
    try {
      return { name, config: fromJson(QueueConfigSchema, (entry.config ?? {}) as JsonValue) };
    } catch (error) {
      return fail(`${where} ("${name}").config: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/** The definitions document of these queues, in the order given, as indented JSON. */
export function formatQueueDefinitions(queues: readonly QueueDefinition[]): string {
  const document = {
    version: queueDefinitionsVersion,
    queues: queues.map(({ name, config }) => ({ name, config: toJson(QueueConfigSchema, config) })),
  };
  return JSON.stringify(document, null, 2);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkKeys(
  value: Record<string, unknown>,
  known: readonly string[],
  where: string,
  fail: (message: string) => never,
): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) fail(`${where} has an unknown key "${key}" (known: ${known.join(", ")})`);
  }
}
