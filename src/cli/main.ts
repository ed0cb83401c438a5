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
import { serveCommand } from "./serve-command.js";
import { tokenCommand } from "./token-command.js";

const usage = `usage: holdshelf <command> [flags]

  serve [--data-dir ./data] [--listen 127.0.0.1:50051] [--metrics-listen 127.0.0.1:9464|off]
        [--durability fsync|os] [--log-level debug|info|warn|error]
        [--auth-file FILE]   (bearer tokens; SIGHUP re-reads it)
        [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE] [--metrics-tls] [--peer-tls-ca FILE]]
        [--allow-unauthenticated-network]
        [--max-request-bytes 8MiB] [--max-streams-per-connection 1000] [--max-waiting-receives 10000]
        [--max-subscribers-per-queue 1000] [--max-queues 10000] [--max-stored-messages 5000000]
        [--max-deduplication-ids 5000000]
        (docs/operations.md "Limits"; HOLDSHELF_MAX_* too)
        [--postgres URL[,URL...] [--node-id ID] [--advertise HOST:PORT] [--shard-lease-ttl 4s] [--route-only]]   (cluster mode: docs/cluster.md)
  cluster init --postgres URL[,URL...] [--shards 128]
  cluster status --postgres URL[,URL...]
  backup DEST   (a running embedded broker's whole store, online, to the new file DEST; needs admin on "*")
  restore SRC [--data-dir ./data]   (a backup into an empty or absent data directory, broker stopped)
  token --name NAME --queues PATTERN --allow admin,send,receive
  queue create|update NAME [--visibility-timeout 30s] [--delay 0s] [--retention 4d]
        [--max-message-bytes N] [--receive-wait-time 0s] [--max-in-flight N] [--max-lease-duration 12h]
        [--dead-letter-queue Q --max-receive-count N] [--min-backoff 1s --max-backoff 5m]
        [--fifo [--content-based-deduplication] [--deduplication-scope queue|message-group]]   (fixed at create: update repeats it)
  queue get|delete|purge NAME
  queue list [--prefix P]
  send QUEUE BODY [--attribute key=value]... [--delay 10s]
        [--group G [--dedup-id D]]   (FIFO queues: prints the sequence number too)
  receive QUEUE [--max N] [--visibility-timeout 30s] [--wait 20s]
  peek QUEUE [--page-size N] [--page-token T] [--all]   (messages oldest first, leasing nothing; needs admin)
  delete QUEUE RECEIPT_HANDLE
  redrive DEAD_LETTER_QUEUE [--to QUEUE] [--max N] [--rate PER_SECOND]
  redrive DEAD_LETTER_QUEUE [--to QUEUE] [--rate PER_SECOND] --async   (a move task: prints its handle)
  move-tasks QUEUE [--max N]   (its last move tasks, newest first, one JSON line each)
  move-tasks cancel TASK_HANDLE
  change-visibility QUEUE RECEIPT_HANDLE DURATION

Client commands call --address (default 127.0.0.1:50051), over TLS with --tls-ca FILE
(and a client certificate with --tls-cert FILE --tls-key FILE). Environment:
HOLDSHELF_DATA_DIR, HOLDSHELF_LISTEN, HOLDSHELF_METRICS_LISTEN, HOLDSHELF_DURABILITY, HOLDSHELF_LOG_LEVEL, HOLDSHELF_ADDRESS,
HOLDSHELF_POSTGRES, HOLDSHELF_NODE_ID, HOLDSHELF_ADVERTISE, HOLDSHELF_SHARD_LEASE_TTL.
Against a broker with --auth-file, client commands send HOLDSHELF_TOKEN (or --token, visible in ps).
HOLDSHELF_AUTH_FILE sets --auth-file.`;

/** Runs the holdshelf command line; resolves to the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      console.log(usage);
      return command === undefined ? 2 : 0;
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
    return await clientCommand(command, args, env, (line) => console.log(line));
  } catch (error) {
    if (error instanceof RpcError) {
      console.error(`holdshelf: ${error.reason || "error"}: ${error.message}`);
      return 1;
    }
    if (
      error instanceof TlsConfigError ||
      error instanceof CommandError ||
      error instanceof BackupFormatError ||
      error instanceof RestoreError
    ) {
      console.error(`holdshelf: ${error.message}`);
      return 1;
    }
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`holdshelf: ${(error as Error).message}\n\n${usage}`);
      return 2;
    }
    throw error;
  }
}
