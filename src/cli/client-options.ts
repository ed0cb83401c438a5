import type { OptionTable } from "./option-table.js";

/** The options every client command takes: where the broker is, and how to reach it. */
export const connectionOptionTable = {
  address: {
    type: "string",
    value: "HOST:PORT",
    env: "HOLDSHELF_ADDRESS",
    default: "127.0.0.1:50051",
    description: "the broker to call",
  },
  "tls-ca": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_TLS_CA",
    description: "call over TLS, trusting this CA",
  },
  "tls-cert": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_CLIENT_TLS_CERT",
    description: "client certificate, for a broker that requires one (with --tls-key)",
  },
  "tls-key": {
    type: "string",
    value: "FILE",
    env: "HOLDSHELF_CLIENT_TLS_KEY",
    description: "private key of --tls-cert",
  },
  // Prefer HOLDSHELF_TOKEN: a --token value is visible to others in the process list.
  token: {
    type: "string",
    value: "TOKEN",
    env: "HOLDSHELF_TOKEN",
    description: "bearer token, for a broker with --auth-file (prefer the variable: ps shows flags)",
  },
} as const satisfies OptionTable;

/** The queue settings of `queue create` and `queue update`; update changes only the ones given. */
export const queueConfigOptionTable = {
  "visibility-timeout": {
    type: "string",
    value: "DURATION",
    description: "default lease of a Receive (receive: this Receive's lease)",
  },
  delay: {
    type: "string",
    value: "DURATION",
    description: "how long a sent message stays hidden (send: this message)",
  },
  retention: { type: "string", value: "DURATION", description: "how long a message is kept" },
  "max-message-bytes": {
    type: "string",
    value: "N",
    description: "largest message accepted, in bytes (default 1048576; 1024 to 1048576)",
  },
  "receive-wait-time": { type: "string", value: "DURATION", description: "default long-poll wait of a Receive" },
  "max-in-flight": { type: "string", value: "N", description: "most messages leased at once" },
  "max-lease-duration": { type: "string", value: "DURATION", description: "longest a lease may be held" },
  "dead-letter-queue": {
    type: "string",
    value: "QUEUE",
    description: "redrive policy: where failing messages go (with --max-receive-count)",
  },
  "max-receive-count": {
    type: "string",
    value: "N",
    description: "redrive policy: deliveries before a message is dead-lettered (with --dead-letter-queue)",
  },
  "no-dead-letter-queue": { type: "boolean", description: "update: remove the redrive policy" },
  "min-backoff": {
    type: "string",
    value: "DURATION",
    description: "retry policy: first retry's wait (with --max-backoff)",
  },
  "max-backoff": { type: "string", value: "DURATION", description: "retry policy: longest wait (with --min-backoff)" },
  "no-retry-policy": { type: "boolean", description: "update: remove the retry policy" },
  tag: {
    type: "string",
    value: "KEY=VALUE",
    multiple: true,
    description: "a tag (update: the tags given replace every tag)",
  },
  "no-tags": { type: "boolean", description: "update: remove every tag" },
  fifo: { type: "boolean", description: "a FIFO queue (fixed when the queue is created)" },
  "content-based-deduplication": {
    type: "boolean",
    description: "FIFO: deduplicate sends without an id by their body's SHA-256",
  },
  "no-content-based-deduplication": { type: "boolean", description: "FIFO, update: turn it off" },
  "deduplication-scope": {
    type: "string",
    value: "queue|message-group",
    description: "FIFO: where deduplication ids must be unique",
  },
} as const satisfies OptionTable;

/** The options of the other client commands. */
export const clientCommandOptionTable = {
  attribute: {
    type: "string",
    value: "KEY=VALUE",
    multiple: true,
    description: "send: a message attribute",
  },
  group: { type: "string", value: "GROUP", default: "", description: "send, FIFO queues: the message group" },
  "dedup-id": { type: "string", value: "ID", default: "", description: "send, FIFO queues: the deduplication id" },
  max: { type: "string", value: "N", description: "receive, redrive, move-tasks: the most messages or tasks" },
  wait: { type: "string", value: "DURATION", description: "receive: how long to wait for a message" },
  prefix: {
    type: "string",
    value: "P",
    default: "",
    description: "queue list, export and apply: only names starting with P",
  },
  to: {
    type: "string",
    value: "QUEUE",
    default: "",
    description: "redrive: the destination (default: each message's source)",
  },
  rate: {
    type: "string",
    value: "PER_SECOND",
    default: "0",
    description: "redrive: messages moved per second (0: no limit)",
  },
  async: { type: "boolean", description: "redrive: start a move task and print its handle" },
  "page-size": { type: "string", value: "N", description: "peek: messages per page" },
  "page-token": { type: "string", value: "T", default: "", description: "peek: the page to show" },
  all: { type: "boolean", description: "peek: every page" },
  "dry-run": { type: "boolean", description: "queue apply: print the changes and make none" },
  "delete-missing": {
    type: "boolean",
    description: "queue apply: delete queues (under --prefix) that the file leaves out",
  },
} as const satisfies OptionTable;
