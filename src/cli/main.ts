import { RpcError } from "../client/rpc-error.js";
import { BackupFormatError } from "../store/backup-format.js";
import { RestoreError } from "../store/restore-backup.js";
import { backupCommand } from "./backup-command.js";
import { clientCommand } from "./client-commands.js";
import { CommandError } from "./command-error.js";
import { clusterCommand } from "./cluster-command.js";
import { TlsConfigError } from "../net/tls-file-checks.js";
import { UsageError } from "./usage-error.js";
import { restoreCommand } from "./restore-command.js";
import { QueueDefinitionsError } from "../server/queue-definitions.js";
import { commandHelp } from "./command-help.js";
import { serveCommand } from "./serve-command.js";
import { tokenCommand } from "./token-command.js";

/** Runs the holdshelf command line; resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      console.log(commandHelp(command === "help" ? args[0] : undefined));
      return command === undefined ? 2 : 0;
    }
    if (args.includes("--help") || args.includes("-h")) {
      console.log(commandHelp(command));
      return 0;
    }
    if (command === "serve") return await serveCommand(args, env);
    if (command === "cluster")
      return await clusterCommand(
        args,
        env,
        (line) => console.log(line),
        (line) => console.error(line),
      );
    if (command === "token")
      return tokenCommand(
        args,
        (line) => console.log(line),
        (line) => console.error(line),
      );
    if (command === "backup") return await backupCommand(args, env, (line) => console.log(line));
    if (command === "restore") return await restoreCommand(args, env, (line) => console.log(line));
    return await clientCommand(
      command,
      args,
      env,
      (line) => console.log(line),
      (line) => console.error(line),
    );
  } catch (error) {
    if (error instanceof RpcError) {
      console.error(`holdshelf: ${error.reason || "error"}: ${error.message}`);
      return 1;
    }
    if (
      error instanceof TlsConfigError ||
      error instanceof CommandError ||
      error instanceof BackupFormatError ||
      error instanceof RestoreError ||
      error instanceof QueueDefinitionsError
    ) {
      console.error(`holdshelf: ${error.message}`);
      return 1;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`holdshelf: ${(error as Error).message}\n(holdshelf ${command} --help lists its options)`);
      return 2;
    }
    throw error;
  }
}
