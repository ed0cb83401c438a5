import { RpcError } from "../client/rpc-error.js";
import { clientCommand } from "./client-commands.js";
import { UsageError } from "./duration-flag.js";
import { serveCommand } from "./serve-command.js";

const usage = `usage: holdshelf <command> [flags]

  serve [--data-dir ./data] [--listen 127.0.0.1:50051] [--metrics-listen 127.0.0.1:9464|off]
        [--durability fsync|os] [--log-level debug|info|warn|error]
  queue create|update NAME [--visibility-timeout 30s] [--delay 0s] [--retention 4d]
        [--max-message-bytes N] [--receive-wait-time 0s] [--max-in-flight N] [--max-lease-duration 12h]
        [--dead-letter-queue Q --max-receive-count N] [--min-backoff 1s --max-backoff 5m]
  queue get|delete|purge NAME
  queue list [--prefix P]
  send QUEUE BODY [--attribute key=value]... [--delay 10s]
  receive QUEUE [--max N] [--visibility-timeout 30s] [--wait 20s]
  delete QUEUE RECEIPT_HANDLE
  redrive DEAD_LETTER_QUEUE [--to QUEUE] [--max N] [--rate PER_SECOND]
  change-visibility QUEUE RECEIPT_HANDLE DURATION

Client commands call --address (default 127.0.0.1:50051). Environment:
HOLDSHELF_DATA_DIR, HOLDSHELF_LISTEN, HOLDSHELF_METRICS_LISTEN, HOLDSHELF_DURABILITY, HOLDSHELF_LOG_LEVEL, HOLDSHELF_ADDRESS.`;

/** Runs the holdshelf command line; resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      console.log(usage);
      return command === undefined ? 2 : 0;
    }
    if (command === "serve") return await serveCommand(args, env);
    return await clientCommand(command, args, env, (line) => console.log(line));
  } catch (error) {
    if (error instanceof RpcError) {
      console.error(`holdshelf: ${error.reason || "error"}: ${error.message}`);
      return 1;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`holdshelf: ${(error as Error).message}\n\n${usage}`);
      return 2;
    }
    throw error;
  }
}
