import type pg from "pg";
import type { Arrival } from "../cluster-queues.js";
import { ScheduleColumns } from "../schedule-columns.js";
import { decodeScheduleValueInto } from "../value-codecs.js";
import { binaryArray } from "./binary-array.js";
import type { CommitFence } from "./commit-statement.js";

/** The channel a commit that fills an inbox notifies, with the destination's shard as payload. */
export const inboxChannel = "holdshelf_inbox";

/**
 * Takes every message waiting in the inboxes of the fenced shards into its
 * queue's current data space, in ONE statement fenced like a commit: the
 * message leaves the inbox and enters the queue together, and only while
 * this store still owns the shard (a new owner takes it otherwise). A
 * message whose queue was deleted meanwhile leaves the inbox and goes
 * nowhere, as the queue's own messages did. Returns what arrived, and
 * whether the fence held.
 */
export async function takeInbound(
  client: pg.Pool | pg.ClientBase,
  fence: CommitFence,
): Promise<{ fenceHeld: boolean; arrivals: Arrival[] }> {
  const { rows } = await client.query<
    [boolean, string | null, string | null, string | null, number | null, Buffer | null]
  >({
    name: "holdshelf-take-inbound",
    text: `WITH fence AS (SELECT shard, epoch FROM holdshelf_shards WHERE shard = ANY($1::int4[]) ORDER BY shard FOR KEY SHARE),
      ok AS (SELECT count(*) = cardinality($1::int4[]) AS ok
        FROM fence JOIN unnest($1::int4[], $2::int8[]) AS held(shard, epoch) ON fence.shard = held.shard AND fence.epoch = held.epoch),
      taken AS (DELETE FROM holdshelf_inbox i WHERE i.shard = ANY($1::int4[]) AND (SELECT ok FROM ok)
        RETURNING i.queue, i.id, i.ready_at, i.state, i.content),
      placed AS (SELECT t.queue, q.data_id, t.id, t.ready_at, t.state, t.content FROM taken t JOIN holdshelf_queues q ON q.name = t.queue),
      content_put AS (INSERT INTO holdshelf_content (data_id, id, content) SELECT data_id, id, content FROM placed
        ON CONFLICT (data_id, id) DO NOTHING),
      schedule_put AS (INSERT INTO holdshelf_schedule (data_id, ready_at, id, state) SELECT data_id, ready_at, id, state FROM placed
        ON CONFLICT (data_id, ready_at, id) DO NOTHING)
      SELECT (SELECT ok FROM ok), p.queue, p.data_id::text, replace(p.id::text, '-', ''), p.ready_at, p.state
      FROM (SELECT 1) AS one LEFT JOIN placed p ON true`,
    values: [binaryArray("int4", fence.shards), binaryArray("int8", fence.epochs)],
    rowMode: "array",
  });
  const fenceHeld = rows[0]?.[0] === true;
  const byQueue = new Map<string, { dataId: number; columns: ScheduleColumns }>();
  for (const [, queue, dataId, id, readyAt, state] of rows) {
    if (queue === null) continue;
    let group = byQueue.get(queue);
    if (group === undefined) byQueue.set(queue, (group = { dataId: Number(dataId), columns: new ScheduleColumns() }));
    const index = group.columns.append();
    group.columns.write(index, { ...emptyEntry, id: id!, readyAt: readyAt! });
    // The state as the sender encoded it: a FIFO message's group and sequence number come with it.
    decodeScheduleValueInto(state!, group.columns, index);
  }
  const arrivals: Arrival[] = [];
  for (const [queue, { dataId, columns }] of byQueue) {
    for (let index = 0; index < columns.length; index++) arrivals.push({ queue, dataId, entry: columns.entry(index) });
  }
  return { fenceHeld, arrivals };
}

// The fields the stored state does not carry are written from here first (decodeScheduleValueInto fills the rest).
const emptyEntry = {
  leased: false,
  receiveCount: 0,
  epoch: 0,
  sendTime: 0,
  enqueuedAt: 0,
  firstReceiveAt: 0,
  leaseStart: 0,
  size: 0,
  hasCheckpoint: false,
};
