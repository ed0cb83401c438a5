import { clusterOptionTable } from "./cluster-flags.js";
import { consoleOptionTable } from "./console-flags.js";
import { limitOptionTable } from "./limit-flags.js";
import type { OptionTable } from "./option-table.js";
import { sqsOptionTable } from "./sqs-flags.js";
import { transportOptionTable } from "./tls-serve-flags.js";

/** The --metrics-listen value that turns the metrics listener off. */
export const metricsOff = "off";

/** The options of `holdshelf serve` that are its own: storage, listeners, logging, tokens, queues. */
export const serveOptionTable = {
  "data-dir": {
    type: "string",
    value: "DIR",
    env: "HOLDSHELF_DATA_DIR",
    default: "./data",
    description: "where the embedded store keeps its data",
  },
  listen: {
    type: "string",
    value: "HOST:PORT",
    env: "HOLDSHELF_LISTEN",
    default: "127.0.0.1:50051",
    description: "where gRPC listens; port 0 picks a free one",
  },
  "metrics-listen": {
    type: "string",
    value: "HOST:PORT|off",
    env: "HOLDSHELF_METRICS_LISTEN",
    default: "127.0.0.1:9464",
    description: "where /metrics, /healthz and /readyz listen, or off",
  },
  durability: {
    type: "string",
    value: "fsync|os",
    env: "HOLDSHELF_DURABILITY",
    default: "fsync",
    description: "answer a write once it is on disk (fsync), or once the OS has it (os)",
  },
  "log-level": {
    type: "string",
    value: "debug|info|warn|error",
    env: "HOLDSHELF_LOG_LEVEL",
    default: "info",
    description: "the least severe log line written (JSON lines on standard error)",
  },
  "auth-file": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_AUTH_FILE",
    description: "bearer tokens callers must send (docs/security.md); SIGHUP re-reads it",
  },
  queues: {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_QUEUES",
    description: "create and update the queues of this file (queue export's format) before serving",
  },
  "shutdown-grace": {
    type: "string",
    value: "DURATION",
    env: "HOLDSHELF_SHUTDOWN_GRACE",
    default: "10s",
    description: "on SIGTERM, how long calls in flight may finish before they are cut off; exit within 5 s after",
  },
} as const satisfies OptionTable;

/** Every option `holdshelf serve` takes, by concern, as its help shows them. */
export const serveOptionGroups: readonly { readonly title: string; readonly table: OptionTable }[] = [
  { title: "broker", table: serveOptionTable },
  { title: "TLS and the listen policy (docs/security.md)", table: transportOptionTable },
  { title: 'limits (docs/operations.md "Limits")', table: limitOptionTable },
  { title: "cluster mode (docs/cluster.md)", table: clusterOptionTable },
  { title: "SQS endpoint (docs/sqs.md)", table: sqsOptionTable },
  { title: "admin console (docs/console.md)", table: consoleOptionTable },
];
