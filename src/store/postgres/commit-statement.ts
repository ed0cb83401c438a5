import type { FoldedBatch } from "./postgres-changes.js";

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
 * fence that share-locks the batch's shard rows and checks they are still at
 * the epochs this store claimed them at, then every table's puts and deletes
 * as set-based data-modifying CTEs, each of which writes nothing unless the
 * fence held. The statement returns whether it did.
 *
 * Why share locks: a claim by another broker bumps the epoch with an UPDATE,
 * which waits for our lock (so our batch lands before the claim, and the new
 * owner loads it), or makes our lock wait and then see the new epoch (so our
 * batch writes nothing). A plain read could pass the fence just before a
 * claim commits, and land after the new owner loaded: a write it never sees.
 *
 * One statement rather than BEGIN, a statement per table and COMMIT: one
 * round trip to the database per group commit instead of up to ten. A new
 * queue's row takes the shard `shardOfQueue` names; a queue put again keeps
 * the shard it has.
 */
export function commitStatement(batch: FoldedBatch, fence: CommitFence, shardOfQueue: (name: string) => number): Statement {
  const values: unknown[] = [fence.shards, fence.epochs];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const ctes = [
    `fence AS (SELECT s.shard FROM holdshelf_shards s
       JOIN unnest($1::int[], $2::bigint[]) AS held(shard, epoch) ON s.shard = held.shard AND s.epoch = held.epoch
       FOR SHARE OF s)`,
    `ok AS (SELECT count(*) = cardinality($1::int[]) AS ok FROM fence)`,
  ];
  // Which parts are present names the statement: a few dozen shapes, each planned once per connection.
  let shape = "";
  const add = (tag: string, cte: string): void => {
    shape += tag;
    ctes.push(cte);
  };
  const fenced = "(SELECT ok FROM ok)";

  const { queues, contents, schedule, checkpoints } = batch;
  if (queues.put.length > 0) {
    add(
      "Q",
      `queue_put AS (INSERT INTO holdshelf_queues (name, shard, data_id, record)
         SELECT name, shard, data_id, record FROM unnest(${param(queues.put.map((key) => key.name))}::text[],
           ${param(queues.put.map((key) => shardOfQueue(key.name)))}::int[], ${param(queues.put.map((key) => key.dataId))}::bigint[],
           ${param(queues.putValues)}::bytea[]) AS put(name, shard, data_id, record)
         WHERE ${fenced}
         ON CONFLICT (name) DO UPDATE SET data_id = EXCLUDED.data_id, record = EXCLUDED.record)`,
    );
  }
  if (queues.deleted.length > 0) {
    add("q", `queue_delete AS (DELETE FROM holdshelf_queues WHERE name = ANY(${param(queues.deleted.map((key) => key.name))}::text[]) AND ${fenced})`);
  }
  if (batch.sequence !== undefined) {
    add("S", `sequence_put AS (UPDATE holdshelf_cluster SET next_sequence = ${param(batch.sequence)}::bigint WHERE ${fenced})`);
  }
  if (contents.put.length > 0) {
    add(
      "C",
      `content_put AS (INSERT INTO holdshelf_content (data_id, id, content)
         SELECT * FROM unnest(${param(contents.put.map((key) => key.dataId))}::bigint[],
           ${param(contents.put.map((key) => key.id))}::uuid[], ${param(contents.putValues)}::bytea[])
         WHERE ${fenced}
         ON CONFLICT (data_id, id) DO UPDATE SET content = EXCLUDED.content)`,
    );
  }
  if (contents.deleted.length > 0) {
    add(
      "c",
      `content_delete AS (DELETE FROM holdshelf_content t
         USING unnest(${param(contents.deleted.map((key) => key.dataId))}::bigint[],
           ${param(contents.deleted.map((key) => key.id))}::uuid[]) AS gone(data_id, id)
         WHERE t.data_id = gone.data_id AND t.id = gone.id AND ${fenced})`,
    );
  }
  if (schedule.put.length > 0) {
    add(
      "R",
      `schedule_put AS (INSERT INTO holdshelf_schedule (data_id, ready_at, id, state)
         SELECT * FROM unnest(${param(schedule.put.map((key) => key.dataId))}::bigint[],
           ${param(schedule.put.map((key) => key.readyAt))}::float8[], ${param(schedule.put.map((key) => key.id))}::uuid[],
           ${param(schedule.putValues)}::bytea[])
         WHERE ${fenced}
         ON CONFLICT (data_id, ready_at, id) DO UPDATE SET state = EXCLUDED.state)`,
    );
  }
  if (schedule.deleted.length > 0) {
    add(
      "r",
      `schedule_delete AS (DELETE FROM holdshelf_schedule t
         USING unnest(${param(schedule.deleted.map((key) => key.dataId))}::bigint[],
           ${param(schedule.deleted.map((key) => key.readyAt))}::float8[],
           ${param(schedule.deleted.map((key) => key.id))}::uuid[]) AS gone(data_id, ready_at, id)
         WHERE t.data_id = gone.data_id AND t.ready_at = gone.ready_at AND t.id = gone.id AND ${fenced})`,
    );
  }
  if (checkpoints.put.length > 0) {
    add(
      "K",
      `checkpoint_put AS (INSERT INTO holdshelf_checkpoints (data_id, id, checkpoint)
         SELECT * FROM unnest(${param(checkpoints.put.map((key) => key.dataId))}::bigint[],
           ${param(checkpoints.put.map((key) => key.id))}::uuid[], ${param(checkpoints.putValues)}::bytea[])
         WHERE ${fenced}
         ON CONFLICT (data_id, id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint)`,
    );
  }
  if (checkpoints.deleted.length > 0) {
    add(
      "k",
      `checkpoint_delete AS (DELETE FROM holdshelf_checkpoints t
         USING unnest(${param(checkpoints.deleted.map((key) => key.dataId))}::bigint[],
           ${param(checkpoints.deleted.map((key) => key.id))}::uuid[]) AS gone(data_id, id)
         WHERE t.data_id = gone.data_id AND t.id = gone.id AND ${fenced})`,
    );
  }
  return { name: `holdshelf-commit-${shape}`, text: `WITH ${ctes.join(",\n")}\nSELECT ok FROM ok`, values };
}
