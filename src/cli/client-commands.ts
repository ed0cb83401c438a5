import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { toJson } from "@bufbuild/protobuf";
import { durationFromMs, timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MessageState } from "../../gen/holdshelf/v1/message_pb.js";
import { DeduplicationScope, QueueConfigSchema, type QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { MessageMoveTaskStatus } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { createQueueServiceRpc, type QueueServiceRpc } from "../client/rpc-client.js";
import { loadClientCredentials } from "../client/load-client-credentials.js";
import { parseDurationFlag } from "./duration-flag.js";
import { applyQueues } from "../server/apply-queues.js";
import { formatQueueDefinitions, parseQueueDefinitions, QueueDefinitionsError } from "../server/queue-definitions.js";
import type { QueueChange } from "../server/queue-plan.js";
import { clientCommandOptionTable, connectionOptionTable, queueConfigOptionTable } from "./client-options.js";
import { fifoSendFromFlags } from "./fifo-flags.js";
import { parserOptions, type OptionTable } from "./option-table.js";
import { keyValue, queueConfigFromFlags, type QueueConfigFlagValues } from "./queue-config-flags.js";
import { rpcQueueAdmin } from "./rpc-queue-admin.js";
import { UsageError } from "./usage-error.js";

/** Every option of the client commands, by concern, as their help shows them. */
export const clientOptionGroups: readonly { readonly title: string; readonly table: OptionTable }[] = [
  { title: "connection", table: connectionOptionTable },
  { title: "queue create and queue update settings", table: queueConfigOptionTable },
  { title: "other commands", table: clientCommandOptionTable },
];

/** Runs a client subcommand (queue, send, receive, peek, delete, redrive, move-tasks, change-visibility) and prints JSON lines. */
export async function clientCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
  note: (line: string) => void,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...parserOptions(connectionOptionTable, env),
      ...parserOptions(queueConfigOptionTable, env),
      ...parserOptions(clientCommandOptionTable, env),
    },
  });
  const tlsCredentials = await loadClientCredentials({
    caFile: values["tls-ca"],
    certFile: values["tls-cert"],
    keyFile: values["tls-key"],
  });
  const rpc = createQueueServiceRpc(values.address, {
    ...(tlsCredentials === undefined ? {} : { credentials: tlsCredentials }),
    ...(values.token ? { token: values.token } : {}),
  });
  const arg = (index: number, name: string): string => {
    const value = positionals[index];
    if (value === undefined) throw new UsageError(`missing ${name}`);
    return value;
  };
  const duration = (flag: "visibility-timeout" | "delay" | "wait") => {
    const text = values[flag];
    return text === undefined ? undefined : durationFromMs(parseDurationFlag(text, flag));
  };
  const integer = (flag: "max" | "rate" | "page-size"): number => {
    const text = values[flag];
    if (text === undefined) return 0;
    if (!/^\d+$/.test(text)) throw new UsageError(`--${flag} takes a whole number`);
    return Number(text);
  };
  try {
    await run(rpc, command, arg, positionals.length, values, duration, integer, print, note);
    return 0;
  } finally {
    rpc.close();
  }
}

async function run(
  rpc: QueueServiceRpc,
  command: string,
  arg: (index: number, name: string) => string,
  argCount: number,
  values: QueueConfigFlagValues & {
    attribute: string[];
    group: string;
    "dedup-id": string;
    max?: string | undefined;
    prefix: string;
    to: string;
    async: boolean;
    "page-token": string;
    all: boolean;
    "dry-run": boolean;
    "delete-missing": boolean;
  },
  duration: (flag: "visibility-timeout" | "delay" | "wait") => ReturnType<typeof durationFromMs> | undefined,
  integer: (flag: "max" | "rate" | "page-size") => number,
  print: (line: string) => void,
  note: (line: string) => void,
): Promise<void> {
  const json = (value: unknown): void => print(JSON.stringify(value, plainJson));
  if (command === "queue") {
    const action = arg(0, "queue action (create, get, list, update, delete, purge, export, apply)");
    switch (action) {
      case "create": {
        const { config } = queueConfigFromFlags(values, "create");
        return json((await rpc.createQueue({ name: arg(1, "queue name"), config })).queue);
      }
      case "update": {
        // Only the settings given change (update_mask); a broker before 0.2.0 ignores the mask.
        const { config, paths } = queueConfigFromFlags(values, "update");
        const request = { name: arg(1, "queue name"), config, updateMask: { paths: [...paths] } };
        return json((await rpc.updateQueue(request)).queue);
      }
      case "export": {
        const queues = await rpcQueueAdmin(rpc).listQueues();
        const chosen = queues.filter((queue) => queue.name.startsWith(values.prefix));
        return print(formatQueueDefinitions(chosen.map(({ name, config }) => ({ name, config: config! }))));
      }
      case "apply": {
        const path = arg(1, "queue definitions file (or - for standard input)");
        const definitions = parseQueueDefinitions(await readInput(path), path === "-" ? "standard input" : path);
        const options = { dryRun: values["dry-run"], deleteMissing: values["delete-missing"], prefix: values.prefix };
        const { changes, unchanged } = await applyQueues(rpcQueueAdmin(rpc), definitions, options);
        for (const change of changes) json(changeLine(change));
        const count = (action: string) => changes.filter((change) => change.action === action).length;
        json({
          created: count("create"),
          updated: count("update"),
          deleted: count("delete"),
          unchanged: unchanged.length,
          dryRun: options.dryRun,
        });
        if (changes.length === 0) note("holdshelf: nothing to change: the broker's queues match the file");
        else if (options.dryRun) note("holdshelf: dry run: nothing was changed");
        return;
      }
      case "get":
        return json((await rpc.getQueue({ name: arg(1, "queue name") })).queue);
      case "list": {
        let pageToken = "";
        do {
          const page = await rpc.listQueues({ prefix: values.prefix, pageToken });
          for (const queue of page.queues) json(queue);
          pageToken = page.nextPageToken;
        } while (pageToken !== "");
        return;
      }
      case "delete":
        await rpc.deleteQueue({ name: arg(1, "queue name") });
        return json({ deleted: arg(1, "queue name") });
      case "purge":
        return json({ purged: Number((await rpc.purgeQueue({ name: arg(1, "queue name") })).purgedCount) });
      default:
        throw new UsageError(`unknown queue action "${action}"`);
    }
  }
  switch (command) {
    case "send": {
      const attributes = Object.fromEntries(values.attribute.map((pair) => keyValue(pair, "attribute")));
      const delay = duration("delay");
      const body = Buffer.from(arg(1, "message body"), "utf8");
      // Prints the message id, and on a FIFO queue its sequence number.
      return json(
        await rpc.send({
          queue: arg(0, "queue name"),
          body,
          attributes,
          ...(delay ? { delay } : {}),
          ...fifoSendFromFlags(values),
        }),
      );
    }
    case "receive": {
      const visibilityTimeout = duration("visibility-timeout");
      const waitTime = duration("wait");
      const { messages } = await rpc.receive({
        queue: arg(0, "queue name"),
        maxMessages: values.max === undefined ? 1 : integer("max"),
        ...(visibilityTimeout ? { visibilityTimeout } : {}),
        ...(waitTime ? { waitTime } : {}),
      });
      for (const message of messages) json({ ...message, body: Buffer.from(message.body).toString("utf8") });
      return;
    }
    case "peek": {
      // One page unless --all; a last line names the next page's token when there is one.
      let pageToken = values["page-token"];
      do {
        const page = await rpc.peekMessages({ queue: arg(0, "queue name"), pageSize: integer("page-size"), pageToken });
        for (const message of page.messages) {
          json({ ...message, body: Buffer.from(message.body).toString("utf8"), state: MessageState[message.state] });
        }
        pageToken = page.nextPageToken;
        if (!values.all && pageToken !== "") json({ nextPageToken: pageToken });
      } while (values.all && pageToken !== "");
      return;
    }
    case "delete":
      await rpc.delete({ queue: arg(0, "queue name"), receiptHandle: arg(1, "receipt handle") });
      return json({ deleted: true });
    case "redrive": {
      if (values.async) {
        if (values.max !== undefined)
          throw new UsageError("--max cannot go with --async: a move task moves every message");
        // A message move task: answers at once; `move-tasks QUEUE` shows its progress.
        const { taskHandle } = await rpc.startMessageMoveTask({
          sourceQueue: arg(0, "dead-letter queue name"),
          destinationQueue: values.to,
          maxPerSecond: integer("rate"),
        });
        return json({ taskHandle });
      }
      const { movedCount } = await rpc.redriveMessages({
        deadLetterQueue: arg(0, "dead-letter queue name"),
        destinationQueue: values.to,
        maxMessages: BigInt(integer("max")),
        maxPerSecond: integer("rate"),
      });
      return json({ moved: Number(movedCount) });
    }
    case "move-tasks": {
      // `move-tasks cancel` alone lists a queue named "cancel".
      if (arg(0, "source queue name, or cancel") === "cancel" && argCount > 1) {
        const { movedCount } = await rpc.cancelMessageMoveTask({ taskHandle: arg(1, "task handle") });
        return json({ moved: Number(movedCount) });
      }
      const { tasks } = await rpc.listMessageMoveTasks({
        sourceQueue: arg(0, "source queue name"),
        maxResults: integer("max") || 10,
      });
      for (const task of tasks) json({ ...task, status: MessageMoveTaskStatus[task.status] });
      return;
    }
    case "change-visibility": {
      const deadline = await rpc.changeVisibility({
        queue: arg(0, "queue name"),
        receiptHandle: arg(1, "receipt handle"),
        visibilityTimeout: durationFromMs(parseDurationFlag(arg(2, "visibility timeout"), "visibility-timeout")),
      });
      return json(deadline);
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** A change as `queue apply` prints it: a created queue's whole configuration, an updated one's differing fields. */
function changeLine(change: QueueChange): object {
  switch (change.action) {
    case "create":
      return { action: "create", queue: change.queue, config: toJson(QueueConfigSchema, change.config) };
    case "update":
      return { action: "update", queue: change.queue, fields: change.fields };
    case "delete":
      return change;
  }
}

/** A file's text, or standard input's for "-". */
async function readInput(path: string): Promise<string> {
  if (path !== "-") {
    return readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
      throw new QueueDefinitionsError(`cannot read ${path}: ${error.code ?? error.message}`);
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

// Prints protobuf values readably: Timestamps as ISO dates, Durations as
// seconds, 64-bit integers as numbers, a queue's deduplication scope by
// name, and no $typeName noise.
function plainJson(key: string, value: unknown): unknown {
  if (key === "$typeName") return undefined;
  if (typeof value === "bigint") return Number(value);
  if (value && typeof value === "object" && "$typeName" in value) {
    const typeName = (value as { $typeName: string }).$typeName;
    if (typeName === "holdshelf.v1.QueueConfig") {
      const config = value as unknown as QueueConfig;
      return {
        ...config,
        deduplicationScope: DeduplicationScope[config.deduplicationScope] ?? config.deduplicationScope,
      };
    }
    if (typeName === "google.protobuf.Timestamp") return new Date(timestampMs(value as Timestamp)).toISOString();
    if (typeName === "google.protobuf.Duration") {
      const { seconds, nanos } = value as unknown as { seconds: bigint; nanos: number };
      return `${Number(seconds) + nanos / 1e9}s`;
    }
  }
  return value;
}
