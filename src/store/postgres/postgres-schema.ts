import { randomBytes } from "node:crypto";
import type pg from "pg";
import { StoreOpenError } from "../store-open-error.js";
import { decodeQueueRecord } from "../value-codecs.js";
import { checkLayout, currentLayout, upgradeLayout, type PostgresLayout } from "./schema-upgrades.js";

/** Shards of a cluster created without saying how many. */
export const defaultShardCount = 128;

// Every table is prefixed, so holdshelf can share a database with other software.
const tables = `
CREATE TABLE IF NOT EXISTS holdshelf_cluster (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  layout_version int NOT NULL,
  shard_count int NOT NULL CHECK (shard_count > 0),
  -- Signs receipt handles: one per cluster, so handles stay valid when a shard moves.
  handle_key bytea NOT NULL,
  next_sequence bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS holdshelf_shards (
  shard int PRIMARY KEY,
  -- Bumped by every claim; every commit checks it (the fence).
  epoch bigint NOT NULL DEFAULT 0,
  owner text,
  -- Judged by the database's clock, never a broker's.
  expires_at timestamptz
);
-- Each shard's own id sequence (shard-ids.ts); added after layout 1 first shipped, so NULL means not started yet.
ALTER TABLE holdshelf_shards ADD COLUMN IF NOT EXISTS next_id bigint;
CREATE TABLE IF NOT EXISTS holdshelf_members (
  node_id text PRIMARY KEY,
  address text NOT NULL,
  started_at timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS holdshelf_queues (
  name text COLLATE "C" PRIMARY KEY,
  shard int NOT NULL,
  data_id bigint NOT NULL,
  record bytea NOT NULL
);
-- The queue a record's redrive policy names ('' for none), so any broker finds a dead-letter
-- queue's sources across shards; added after layout 1 first shipped: NULL until backfilled.
ALTER TABLE holdshelf_queues ADD COLUMN IF NOT EXISTS dead_letter_queue text COLLATE "C";
CREATE INDEX IF NOT EXISTS holdshelf_queues_by_dead_letter_queue ON holdshelf_queues (dead_letter_queue) WHERE dead_letter_queue <> '';
-- Messages sent to a queue from another shard (a dead-letter move or a redrive), waiting for
-- the queue's owner to take them into its data space: keyed by the destination's shard and name.
CREATE TABLE IF NOT EXISTS holdshelf_inbox (
  shard int NOT NULL,
  queue text COLLATE "C" NOT NULL,
  id uuid NOT NULL,
  ready_at float8 NOT NULL,
  state bytea NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (shard, queue, id)
);
CREATE TABLE IF NOT EXISTS holdshelf_content (
  data_id bigint NOT NULL,
  id uuid NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (data_id, id)
);
-- The deadline index: keyed by ready time, so a load reads each queue in ready order.
CREATE TABLE IF NOT EXISTS holdshelf_schedule (
  data_id bigint NOT NULL,
  ready_at float8 NOT NULL,
  id uuid NOT NULL,
  state bytea NOT NULL,
  PRIMARY KEY (data_id, ready_at, id)
);
CREATE TABLE IF NOT EXISTS holdshelf_checkpoints (
  data_id bigint NOT NULL,
  id uuid NOT NULL,
  checkpoint bytea NOT NULL,
  PRIMARY KEY (data_id, id)
);
-- FIFO queues' deduplication ids within their window, the record as LevelDB's dedup space holds it
-- (value-codecs.ts). Kept by data id, so a purge forgets them. Added after layout 1 first shipped:
-- an existing cluster gets it when a broker starts.
CREATE TABLE IF NOT EXISTS holdshelf_deduplication (
  data_id bigint NOT NULL,
  key text COLLATE "C" NOT NULL,
  record bytea NOT NULL,
  PRIMARY KEY (data_id, key)
);
`;

/** What a cluster was created with. */
export interface ClusterInfo {
  readonly shardCount: number;
  readonly handleKey: Buffer;
}

// Brokers starting together must not both create the tables: one transaction-scoped lock serialises them.
const schemaLockKey = 0x686f6c64; // "hold"

/**
 * Creates the tables and the cluster row if they are missing (the first
 * broker or `holdshelf cluster init` does it), upgrades an older layout
 * (schema-upgrades.ts), and returns the cluster's shard count and handle
 * key. `shardCount` applies only to a new cluster. A newer layout is refused
 * with nothing written.
 */
export async function ensureCluster(
  client: pg.ClientBase,
  shardCount = defaultShardCount,
  layout: PostgresLayout = currentLayout,
): Promise<ClusterInfo> {
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 65_536) {
    throw new StoreOpenError(`shard count ${shardCount} is not between 1 and 65536`);
  }
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [schemaLockKey]);
    // Before any table is created or changed: a newer layout is refused with nothing written.
    const found = await checkLayout(client, layout);
    // The steps work on the tables as the older layout left them; what they lack is created next.
    if (found !== undefined) await upgradeLayout(client, found, layout);
    await client.query(tables);
    await client.query(
      `INSERT INTO holdshelf_cluster (layout_version, shard_count, handle_key, next_sequence)
       VALUES ($1, $2, $3, 1) ON CONFLICT (singleton) DO NOTHING`,
      [layout.version, shardCount, randomBytes(32)],
    );
    const { rows } = await client.query<{ shard_count: number; handle_key: Buffer }>(
      "SELECT shard_count, handle_key FROM holdshelf_cluster",
    );
    const cluster = rows[0]!;
    await client.query(
      "INSERT INTO holdshelf_shards (shard) SELECT generate_series(0, $1::int - 1) ON CONFLICT (shard) DO NOTHING",
      [cluster.shard_count],
    );
    await backfillDeadLetterQueues(client);
    await client.query("COMMIT");
    return { shardCount: cluster.shard_count, handleKey: cluster.handle_key };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** Fills dead_letter_queue of records written before the column existed, from each record's policy. */
async function backfillDeadLetterQueues(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ name: string; record: Buffer }>(
    "SELECT name, record FROM holdshelf_queues WHERE dead_letter_queue IS NULL",
  );
  for (const row of rows) {
    const target = decodeQueueRecord(row.record).config.redrivePolicy?.deadLetterQueue ?? "";
    await client.query("UPDATE holdshelf_queues SET dead_letter_queue = $2 WHERE name = $1", [row.name, target]);
  }
}
