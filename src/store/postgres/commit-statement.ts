import { binaryArray, type ElementType } from "./binary-array.js";
import type { FoldedBatch, TableRows } from "./postgres-changes.js";

/** A data space row's key, as the folded batch has it: a message's (id, and ready time in the deadline index) or a deduplication record's. */
type DataKey = { readonly dataId: number; readonly id?: string; readonly readyAt?: number; readonly key?: string };

/** A key column: its name, its PostgreSQL type, and how to read it from a key. */
type KeyColumn = readonly [name: string, type: ElementType, pick: (key: DataKey) => unknown];

/** One data space table of a batch: its rows, its value column, the key columns after data id, and its shape tags. */
interface DataSpaceTable {
  readonly tags: string;
  readonly table: string;
  readonly value: string;
  readonly rows: TableRows<DataKey>;
  readonly keys: KeyColumn[];
}

/** The shards a commit is fenced by, with the epochs this store holds them at. */
export interface CommitFence {
  readonly shards: readonly number[];
  readonly epochs: readonly number[];
}

/** A parameterised statement for node-postgres; `name` makes the server keep its plan. */
export interface Statement {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/**
 * One batch as ONE statement, which PostgreSQL runs as one transaction: a
 * fence that locks the batch's shard rows and checks they are still at
 * the epochs this store claimed them at, then every table's puts and deletes
 * as set-based data-modifying CTEs, each of which writes nothing unless the
 * fence held. The statement returns whether it did.
 *
 * Why a lock: a claim by another broker first locks the shard rows FOR
 * UPDATE, which waits for our lock (so our batch lands before the claim, and
 * the new owner loads it), or makes our lock wait and then see the new epoch
 * (so our batch writes nothing). A plain read could pass the fence just
 * before a claim commits, and land after the new owner loaded: a write it
 * never sees.
 *
 * Why FOR KEY SHARE, in shard order: it conflicts with the claim's FOR
 * UPDATE, but not with the owner's own lease renewals (an UPDATE of no key
 * column), which under FOR SHARE deadlocked with commits that locked
 * several shards (the cluster crash run found it: PostgreSQL 40P01). Rows
 * are locked in shard order, as the claim and the renewal lock them, so a
 * commit and a claim wait for each other instead of deadlocking.
 *
 * Why a lookup per key: after autoanalyze has seen a table drained (pages
 * of dead rows, one live), the planner takes it for a one-row table and,
 * free to choose, joins the deleted keys to the whole table (a sequential
 * scan, or its primary key with no condition) on every commit: 28-67 rows
 * read a message instead of about 6 (docs/performance.md). A delete whose
 * rows are found by a LATERAL subquery, kept apart by OFFSET 0 so that it
 * is not flattened back into a join, can only probe the primary key once
 * per key, and deletes the tuples it found (a TID scan). The sessions'
 * enable_seqscan = off (postgres-sessions.ts) keeps each probe off a scan,
 * which the same statistics price as cheaper. A prepared statement's
 * generic plan has the same shape: there is no other plan to choose. Only
 * this store writes its shards' rows, one batch at a time, so no other
 * transaction moves a tuple between the lookup and the delete.
 *
 * One statement rather than BEGIN, a statement per table and COMMIT: one
 * round trip to the database per group commit instead of up to ten. A new
 * queue's row takes the shard `shardOfQueue` names; a queue put again keeps
 * the shard it has.
 */
export function commitStatement(
  batch: FoldedBatch,
  fence: CommitFence,
  shardOfQueue: (name: string) => number,
): Statement {
  const values: unknown[] = [binaryArray("int4", fence.shards), binaryArray("int8", fence.epochs)];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  // Every array goes in binary (binary-array.ts), cast to its type so PostgreSQL knows how to read it.
  const array = (type: ElementType, elements: readonly unknown[]): string =>
    `${param(binaryArray(type, elements))}::${type}[]`;
  const ctes = [
    `fence AS (SELECT shard, epoch FROM holdshelf_shards WHERE shard = ANY($1::int4[]) ORDER BY shard FOR KEY SHARE)`,
    `ok AS (SELECT count(*) = cardinality($1::int4[]) AS ok
       FROM fence JOIN unnest($1::int4[], $2::int8[]) AS held(shard, epoch) ON fence.shard = held.shard AND fence.epoch = held.epoch)`,
  ];
  // Which parts are present names the statement: a few dozen shapes, each planned once per connection.
  let shape = "";
  const add = (tag: string, cte: string): void => {
    shape += tag;
    ctes.push(cte);
  };
  const fenced = "(SELECT ok FROM ok)";

  const { queues, contents, schedule, checkpoints, deduplications } = batch;
  if (queues.put.length > 0) {
    add(
      "Q",
      `queue_put AS (INSERT INTO holdshelf_queues (name, shard, data_id, record, dead_letter_queue)
         SELECT name, shard, data_id, record, dead_letter_queue FROM unnest(${array(
           "text",
           queues.put.map((key) => key.name),
         )},
           ${array(
             "int4",
             queues.put.map((key) => shardOfQueue(key.name)),
           )}, ${array(
             "int8",
             queues.put.map((key) => key.dataId),
           )},
           ${array("bytea", queues.putValues)}, ${array(
             "text",
             queues.put.map((key) => key.deadLetterQueue),
           )})
           AS put(name, shard, data_id, record, dead_letter_queue)
         WHERE ${fenced}
         ON CONFLICT (name) DO UPDATE SET data_id = EXCLUDED.data_id, record = EXCLUDED.record, dead_letter_queue = EXCLUDED.dead_letter_queue)`,
    );
  }
  if (queues.deleted.length > 0) {
    add(
      "q",
      `queue_delete AS (DELETE FROM holdshelf_queues WHERE name = ANY(${array(
        "text",
        queues.deleted.map((key) => key.name),
      )}) AND ${fenced})`,
    );
  }
  if (batch.sequence !== undefined) {
    add(
      "S",
      `sequence_put AS (UPDATE holdshelf_cluster SET next_sequence = ${param(batch.sequence)}::bigint WHERE ${fenced})`,
    );
  }
  if (batch.shardSequences.size > 0) {
    add(
      "N",
      `shard_sequence_put AS (UPDATE holdshelf_shards s SET next_id = GREATEST(coalesce(s.next_id, 0), put.next)
         FROM unnest(${array("int4", [...batch.shardSequences.keys()])}, ${array("int8", [...batch.shardSequences.values()])}) AS put(shard, next)
         WHERE s.shard = put.shard AND ${fenced})`,
    );
  }
  // The data space tables: the three message tables, keyed by data id and message id (and ready
  // time, for the deadline index), and the deduplication records, keyed by data id and key.
  const messageId: KeyColumn = ["id", "uuid", (key) => key.id];
  const dataSpaceTables: DataSpaceTable[] = [
    { tags: "Cc", table: "holdshelf_content", value: "content", rows: contents, keys: [messageId] },
    {
      tags: "Rr",
      table: "holdshelf_schedule",
      value: "state",
      rows: schedule,
      keys: [["ready_at", "float8", (key) => key.readyAt], messageId],
    },
    { tags: "Kk", table: "holdshelf_checkpoints", value: "checkpoint", rows: checkpoints, keys: [messageId] },
    {
      tags: "Dd",
      table: "holdshelf_deduplication",
      value: "record",
      rows: deduplications,
      keys: [["key", "text", (key) => key.key]],
    },
  ];
  for (const { tags, table, value, rows, keys } of dataSpaceTables) {
    const columns: KeyColumn[] = [["data_id", "int8", (key) => key.dataId], ...keys];
    const names = columns.map(([name]) => name).join(", ");
    const arrays = (of: readonly DataKey[]): string =>
      columns.map(([, type, pick]) => array(type, of.map(pick))).join(", ");
    if (rows.put.length > 0) {
      add(
        tags[0]!,
        `${value}_put AS (INSERT INTO ${table} (${names}, ${value})
           SELECT * FROM unnest(${arrays(rows.put)}, ${array("bytea", rows.putValues)})
           WHERE ${fenced}
           ON CONFLICT (${names}) DO UPDATE SET ${value} = EXCLUDED.${value})`,
      );
    }
    if (rows.deleted.length > 0) {
      add(
        tags[1]!,
        // Each row found by its whole key, then deleted by its tuple id: see "Why a lookup per key" above.
        `${value}_delete AS (DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
           SELECT found.ctid FROM unnest(${arrays(rows.deleted)}) AS gone(${names}),
             LATERAL (SELECT t.ctid FROM ${table} t
               WHERE ${columns.map(([name]) => `t.${name} = gone.${name}`).join(" AND ")} OFFSET 0) AS found))
           AND ${fenced})`,
      );
    }
  }
  let result = "SELECT ok FROM ok";
  if (batch.inbox.length > 0) {
    const { inbox } = batch;
    const shards = inbox.map((message) => shardOfQueue(message.queue));
    add(
      "I",
      `inbox_put AS (INSERT INTO holdshelf_inbox (shard, queue, id, ready_at, state, content)
         SELECT * FROM unnest(${array("int4", shards)}, ${array(
           "text",
           inbox.map((message) => message.queue),
         )},
           ${array(
             "uuid",
             inbox.map((message) => message.id),
           )}, ${array(
             "float8",
             inbox.map((message) => message.readyAt),
           )},
           ${array(
             "bytea",
             inbox.map((message) => message.state),
           )}, ${array(
             "bytea",
             inbox.map((message) => message.content),
           )})
         WHERE ${fenced}
         ON CONFLICT (shard, queue, id) DO UPDATE SET ready_at = EXCLUDED.ready_at, state = EXCLUDED.state, content = EXCLUDED.content)`,
    );
    // Delivered when the statement commits, never if it writes nothing: the owners take them in at once (postgres-inbox.ts).
    ctes.push(
      `inbox_notify AS (SELECT pg_notify('holdshelf_inbox', shard::text) FROM unnest(${array("int4", [...new Set(shards)])}) AS notified(shard) WHERE ${fenced})`,
    );
    // A SELECT in a WITH runs only where it is read.
    result = "SELECT ok FROM ok WHERE (SELECT count(*) FROM inbox_notify) >= 0";
  }
  return { name: `holdshelf-commit-${shape}`, text: `WITH ${ctes.join(",\n")}\n${result}`, values };
}
