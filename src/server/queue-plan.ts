import { create, toJson, type JsonValue } from "@bufbuild/protobuf";
import { QueueConfigSchema, type Queue, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { checkQueueName, keepingEarlierDefaults, resolveQueueConfig } from "../broker/queue-config.js";
import { HoldshelfError } from "../errors/holdshelf-error.js";
import { fifoNameSuffix } from "../protocol/fifo-name-suffix.js";
import { queueConfigFromWire, queueToWire } from "../service/wire-convert.js";
import { QueueDefinitionsError, type QueueDefinition } from "./queue-definitions.js";

/** One change `queue apply` makes. */
export type QueueChange =
  | { readonly action: "create"; readonly queue: string; readonly config: QueueConfig }
  | {
      readonly action: "update";
      readonly queue: string;
      readonly config: QueueConfig;
      /** Each field that differs, by its QueueConfig name, with the broker's value and the file's (JSON). */
      readonly fields: Readonly<
        Record<string, { readonly from: JsonValue | undefined; readonly to: JsonValue | undefined }>
      >;
    }
  | { readonly action: "delete"; readonly queue: string };

/** What it takes to make the broker's queues match a definitions file, in the order to do it. */
export interface QueuePlan {
  /** Creates (dead-letter queues before their sources), then updates, then deletes (sources before their dead-letter queues). */
  readonly changes: readonly QueueChange[];
  /** The queues of the file that already match. */
  readonly unchanged: readonly string[];
}

/** Which of the broker's queues a plan may delete. */
export interface PlanOptions {
  /** Delete the queues the file leaves out; without it, none is ever deleted. */
  readonly deleteMissing: boolean;
  /** Only queues whose names start with this are deleted. */
  readonly prefix: string;
}

/**
 * Compares a definitions file with the broker's queues and plans the changes,
 * or throws QueueDefinitionsError before anything is changed: a setting out
 * of bounds (the broker's own checks), a queue whose FIFO-ness would change,
 * a redrive to a queue neither in the file nor kept on the broker, a FIFO
 * queue redriving to a standard one or the reverse, a redrive cycle, a
 * delete of a queue another kept queue dead-letters to.
 */
export function planQueueChanges(
  definitions: readonly QueueDefinition[],
  current: readonly Queue[],
  options: PlanOptions,
): QueuePlan {
  const onBroker = new Map(current.map((queue) => [queue.name, queue.config ?? create(QueueConfigSchema)]));
  const wanted = new Map(
    definitions.map((definition) => [definition.name, normalize(definition, onBroker.get(definition.name))]),
  );
  const deleted = options.deleteMissing
    ? current.filter((queue) => queue.name.startsWith(options.prefix) && !wanted.has(queue.name)).map((q) => q.name)
    : [];
  // The queues after the apply, with the configurations they will have.
  const final = new Map(onBroker);
  for (const name of deleted) final.delete(name);
  for (const [name, config] of wanted) final.set(name, config);
  for (const [name, config] of wanted) {
    const existing = onBroker.get(name);
    if (existing !== undefined && existing.fifo !== config.fifo) {
      throw new QueueDefinitionsError(
        `queue "${name}" is ${kind(existing)} on the broker and ${kind(config)} in the file: FIFO-ness is fixed when a queue is created (delete and recreate it to change it)`,
      );
    }
    const target = config.redrivePolicy?.deadLetterQueue;
    if (target === undefined) continue;
    const dlq = final.get(target);
    if (dlq === undefined) {
      const why = onBroker.has(target)
        ? "it is deleted as missing from the file"
        : "it is neither in the file nor on the broker";
      throw new QueueDefinitionsError(`queue "${name}" dead-letters to "${target}", but ${why}`);
    }
    if (dlq.fifo !== config.fifo)
      throw new QueueDefinitionsError(
        `queue "${name}" is ${kind(config)}, so its dead-letter queue "${target}" must be too`,
      );
  }
  for (const name of deleted) {
    const user = [...final].find(([, config]) => config.redrivePolicy?.deadLetterQueue === name);
    if (user !== undefined)
      throw new QueueDefinitionsError(`cannot delete "${name}": queue "${user[0]}" keeps it as its dead-letter queue`);
  }
  const order = redriveOrder(final);
  const changes: QueueChange[] = [];
  const unchanged: string[] = [];
  const updates: QueueChange[] = [];
  for (const name of order) {
    const config = wanted.get(name);
    if (config === undefined) continue;
    const existing = onBroker.get(name);
    if (existing === undefined) {
      changes.push({ action: "create", queue: name, config });
      continue;
    }
    const fields = differences(existing, config);
    if (Object.keys(fields).length === 0) unchanged.push(name);
    else updates.push({ action: "update", queue: name, config, fields });
  }
  changes.push(...updates);
  // Sources before their dead-letter queues: the reverse of the broker's current redrive order.
  if (deleted.length > 0) {
    for (const name of redriveOrder(onBroker).reverse())
      if (deleted.includes(name)) changes.push({ action: "delete", queue: name });
  }
  return { changes, unchanged: unchanged.sort() };
}

/**
 * A definition's configuration as the broker would store it, every default
 * filled in (for a queue on the broker, as an update of it would: an unset
 * max_message_bytes keeps its earlier default, so a file written before
 * 0.2.0 changes nothing); throws if the broker would refuse it.
 */
function normalize({ name, config }: QueueDefinition, existing: QueueConfig | undefined): QueueConfig {
  try {
    checkQueueName(name, "name");
    const input = queueConfigFromWire(config);
    const resolved = keepingEarlierDefaults(resolveQueueConfig(input), input, existing);
    if (name.endsWith(fifoNameSuffix) && resolved.fifo === undefined)
      throw new QueueDefinitionsError(`queue "${name}": a name ending in "${fifoNameSuffix}" is for a FIFO queue`);
    if (resolved.redrivePolicy?.deadLetterQueue === name)
      throw new QueueDefinitionsError(`queue "${name}" names itself as its dead-letter queue`);
    const counts = { visible: 0, inFlight: 0, delayed: 0, oldestSendTime: undefined };
    const info = { name, config: resolved, counts, deadLetterSourceQueues: [], oldestMessageAgeMs: undefined };
    return queueToWire({ ...info, createTime: 0, updateTime: 0 }).config!;
  } catch (error) {
    if (error instanceof HoldshelfError) throw new QueueDefinitionsError(`queue "${name}": ${error.message}`);
    throw error;
  }
}

/** Queue names with each dead-letter queue before the queues that redrive to it; throws on a cycle. */
function redriveOrder(queues: ReadonlyMap<string, QueueConfig>): string[] {
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: readonly string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      const cycle = [...path.slice(path.indexOf(name)), name];
      throw new QueueDefinitionsError(`the dead-letter queues form a cycle: ${cycle.join(" -> ")}`);
    }
    state.set(name, "visiting");
    const target = queues.get(name)?.redrivePolicy?.deadLetterQueue;
    if (target !== undefined && queues.has(target)) visit(target, [...path, name]);
    state.set(name, "done");
    order.push(name);
  };
  for (const name of [...queues.keys()].sort()) visit(name, []);
  return order;
}

/** The fields that differ between two full configurations, by QueueConfig field name. */
function differences(
  from: QueueConfig,
  to: QueueConfig,
): Record<string, { from: JsonValue | undefined; to: JsonValue | undefined }> {
  const before = jsonFields(from);
  const after = jsonFields(to);
  const fields: Record<string, { from: JsonValue | undefined; to: JsonValue | undefined }> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (canonical(before[key]) !== canonical(after[key])) fields[key] = { from: before[key], to: after[key] };
  }
  return fields;
}

function jsonFields(config: QueueConfig): Record<string, JsonValue> {
  return toJson(QueueConfigSchema, config, { useProtoFieldName: true }) as Record<string, JsonValue>;
}

/** JSON text with object keys sorted, so that tags compare whatever their order. */
function canonical(value: JsonValue | undefined): string {
  if (value === undefined) return "";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
    .join(",")}}`;
}

function kind(config: QueueConfig): string {
  return config.fifo ? "FIFO" : "standard";
}
