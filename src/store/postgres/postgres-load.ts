// Reading a queue's rows back, and freeing data spaces no queue uses: what
// a PostgresStore does when it loads shards (postgres-store.ts).
import type pg from "pg";
import { writeIdWords } from "../message-id-words.js";
import { idWordsPerEntry, ScheduleColumns } from "../schedule-columns.js";
import type { StoredDeduplication } from "../store.js";
import { decodeDeduplication, decodeScheduleValueInto } from "../value-codecs.js";
import { binaryArray } from "./binary-array.js";

// Rows of the deadline index fetched per round trip when loading a queue.
const loadPage = 10_000;

/** A queue's deadline index, in ready order, read in keyset pages straight into columns. */
export async function loadSchedule(pool: pg.Pool, dataId: number): Promise<ScheduleColumns> {
  const schedule = new ScheduleColumns();
  let after: [number, string] | undefined;
  for (;;) {
    const { rows } = await pool.query<[number, string, Buffer]>({
      name: after === undefined ? "holdshelf-load-first" : "holdshelf-load-next",
      text: `SELECT ready_at, replace(id::text, '-', ''), state FROM holdshelf_schedule
             WHERE data_id = $1 ${after === undefined ? "" : "AND (ready_at, id) > ($3, $4::uuid)"}
             ORDER BY ready_at, id LIMIT $2`,
      values: after === undefined ? [dataId, loadPage] : [dataId, loadPage, ...after],
      rowMode: "array",
    });
    schedule.reserve(schedule.length + rows.length);
    for (const [readyAt, id, state] of rows) {
      const index = schedule.append();
      schedule.readyAt[index] = readyAt;
      writeIdWords(id, schedule.idWords, index * idWordsPerEntry);
      decodeScheduleValueInto(state, schedule, index);
    }
    if (rows.length < loadPage) return schedule;
    const last = rows[rows.length - 1]!;
    after = [last[0], last[1]];
  }
}

/**
 * The deduplication records of these data spaces, by data id (none where a
 * data space has none), expired ones too: the broker skips those. One
 * statement for every queue of a load, in keyset pages, since only FIFO
 * queues have any.
 */
export async function loadDeduplications(
  pool: pg.Pool,
  dataIds: readonly number[],
): Promise<Map<number, StoredDeduplication[]>> {
  const byDataId = new Map<number, StoredDeduplication[]>();
  let after: [string, string] | undefined;
  for (;;) {
    const { rows } = await pool.query<[string, string, Buffer]>({
      name: after === undefined ? "holdshelf-load-deduplication-first" : "holdshelf-load-deduplication-next",
      text: `SELECT data_id::text, key, record FROM holdshelf_deduplication
             WHERE data_id = ANY($1::int8[]) ${after === undefined ? "" : "AND (data_id, key) > ($3::int8, $4)"}
             ORDER BY data_id, key LIMIT $2`,
      values:
        after === undefined
          ? [binaryArray("int8", dataIds), loadPage]
          : [binaryArray("int8", dataIds), loadPage, ...after],
      rowMode: "array",
    });
    for (const [dataId, key, record] of rows) {
      let records = byDataId.get(Number(dataId));
      if (records === undefined) byDataId.set(Number(dataId), (records = []));
      records.push(decodeDeduplication(key, record));
    }
    if (rows.length < loadPage) return byDataId;
    const last = rows[rows.length - 1]!;
    after = [last[0], last[1]];
  }
}

/**
 * Frees data spaces that no queue uses (a purge or delete that a crash
 * interrupted before dropData finished). The distinct data ids of each
 * table are found by skipping through its primary key, one probe per data
 * space, not by reading every row.
 */
export async function dropOrphanedData(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ data_id: string }>(
    `SELECT DISTINCT data_id FROM (${[
      "holdshelf_schedule",
      "holdshelf_content",
      "holdshelf_checkpoints",
      "holdshelf_deduplication",
    ]
      .map(
        (table) => `(WITH RECURSIVE ids AS (
            SELECT min(data_id) AS data_id FROM ${table}
            UNION ALL
            SELECT (SELECT min(data_id) FROM ${table} WHERE data_id > ids.data_id) FROM ids WHERE ids.data_id IS NOT NULL)
          SELECT data_id FROM ids WHERE data_id IS NOT NULL)`,
      )
      .join(" UNION ")}) AS used
     WHERE data_id NOT IN (SELECT data_id FROM holdshelf_queues)`,
  );
  for (const row of rows) await dropDataSpace(pool, Number(row.data_id));
}

/**
 * Deletes every row of a data space. Not fenced: it frees a data space no
 * queue uses (data ids are never reused), which no other broker can be
 * writing to.
 */
export async function dropDataSpace(pool: pg.Pool, dataId: number): Promise<void> {
  await pool.query(
    `WITH content AS (DELETE FROM holdshelf_content WHERE data_id = $1),
          checkpoints AS (DELETE FROM holdshelf_checkpoints WHERE data_id = $1),
          deduplication AS (DELETE FROM holdshelf_deduplication WHERE data_id = $1)
     DELETE FROM holdshelf_schedule WHERE data_id = $1`,
    [dataId],
  );
}
