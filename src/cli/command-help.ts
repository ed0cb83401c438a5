import { clientOptionGroups } from "./client-commands.js";
import { clusterCommandOptionTable } from "./cluster-command.js";
import { connectionOptionTable } from "./client-options.js";
import { optionHelp, type OptionTable } from "./option-table.js";
import { restoreOptionTable } from "./restore-command.js";
import { serveOptionGroups } from "./serve-options.js";
import { tokenOptionTable } from "./token-command.js";

interface CommandHelp {
  /** The commands' synopses, one a line. */
  readonly synopsis: readonly string[];
  readonly groups: readonly { readonly title: string; readonly table: OptionTable }[];
}

const clientHelp: CommandHelp = {
  synopsis: [
    "queue create NAME [settings]",
    "queue update NAME settings...   (changes only the settings given)",
    "queue get|delete|purge NAME",
    "queue list [--prefix P]",
    "queue export [--prefix P]   (every queue's configuration as one JSON document)",
    "queue apply FILE|- [--dry-run] [--delete-missing [--prefix P]]   (make the queues match the file)",
    "send QUEUE BODY [--attribute key=value]... [--delay 10s] [--group G [--dedup-id D]]",
    "receive QUEUE [--max N] [--visibility-timeout 30s] [--wait 20s]",
    "peek QUEUE [--page-size N] [--page-token T] [--all]   (oldest first, leasing nothing; needs admin)",
    "delete QUEUE RECEIPT_HANDLE",
    "redrive DEAD_LETTER_QUEUE [--to QUEUE] [--max N] [--rate PER_SECOND] [--async]",
    "move-tasks QUEUE [--max N]",
    "move-tasks cancel TASK_HANDLE",
    "change-visibility QUEUE RECEIPT_HANDLE DURATION",
  ],
  groups: clientOptionGroups,
};

/** Each command's help, by command name; the client commands share one. */
const commandHelps: Readonly<Record<string, CommandHelp>> = {
  serve: { synopsis: ["serve [options]   (runs the broker until SIGINT or SIGTERM)"], groups: serveOptionGroups },
  cluster: {
    synopsis: ["cluster init --postgres URL[,URL...] [--shards 128]", "cluster status --postgres URL[,URL...]"],
    groups: [{ title: "cluster", table: clusterCommandOptionTable }],
  },
  backup: {
    synopsis: [
      'backup DEST   (a running embedded broker\'s whole store, online, to the new file DEST; needs admin on "*")',
    ],
    groups: [{ title: "connection", table: connectionOptionTable }],
  },
  restore: {
    synopsis: ["restore SRC [--data-dir DIR]   (a backup into an empty or absent data directory, broker stopped)"],
    groups: [{ title: "restore", table: restoreOptionTable }],
  },
  token: {
    synopsis: [
      "token --name NAME --queues PATTERN --allow admin,send,receive   (prints a token and its auth file entry)",
    ],
    groups: [{ title: "token", table: tokenOptionTable }],
  },
  queue: clientHelp,
};

/** The commands whose help is the client commands'. */
const clientCommands = ["send", "receive", "peek", "delete", "redrive", "move-tasks", "change-visibility"];

/**
 * The help of one command, or of every command: synopses, then each option
 * with its value, default and environment variable, all from the option
 * tables the parsers use.
 */
export function commandHelp(command?: string): string {
  const name = command !== undefined && clientCommands.includes(command) ? "queue" : command;
  const chosen = name === undefined ? undefined : commandHelps[name];
  const helps = chosen === undefined ? Object.values(commandHelps) : [chosen];
  const lines = ["usage: holdshelf <command> [options]   (holdshelf <command> --help shows one command's)", ""];
  for (const help of helps) lines.push(...help.synopsis.map((line) => `  ${line}`));
  for (const help of helps) {
    const title = help === clientHelp ? "client commands" : help.synopsis[0]!.split(" ")[0]!;
    for (const group of help.groups) lines.push("", `${title} options, ${group.title}:`, ...optionHelp(group.table));
  }
  lines.push(
    "",
    "A flag overrides its environment variable. Durations: 500ms, 30s, 5m, 1h30m, 12h, 4d (a bare number is seconds).",
    "Client commands print JSON lines; a failed call prints its stable reason and exits 1, a usage error exits 2.",
  );
  return lines.join("\n");
}
