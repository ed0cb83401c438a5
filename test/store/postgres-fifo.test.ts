// FIFO queues on PostgresStore beyond the store contract: a cluster created
// before FIFO queues gets the deduplication table when a broker starts, and
// a FIFO message sent across shards (through the inbox) keeps its group,
// sequence number and deduplication id.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ShardCluster } from "../../src/cluster/shard-cluster.js";
import type { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { takeInbound } from "../../src/store/postgres/postgres-inbox.js";
import type { QueueRecord } from "../../src/store/store.js";
import { postgresForFile, skipWithoutPostgres } from "../support/postgres-server.js";
import { content, queueRecord, scheduleEntry, t0 } from "./store-fixtures.js";

const postgres = postgresForFile();

/** A FIFO queue's record. */
function fifoQueueRecord(name: string, id: number): QueueRecord {
  const record = queueRecord(name, id);
  return {
    ...record,
    config: { ...record.config, fifo: { contentBasedDeduplication: false, deduplicationScope: "queue" } },
  };
}

describe.skipIf(skipWithoutPostgres)("PostgresStore with FIFO queues", () => {
  let url: string;
  let admin: pg.Client;
  let store: PostgresStore | undefined;

  beforeEach(async () => {
    url = await postgres().createDatabase();
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await admin.end();
  });

  async function open(): Promise<PostgresStore> {
    await store?.close();
    const opened = await ShardCluster.open({
      urls: [url],
      nodeId: "fifo",
      advertisedAddress: "127.0.0.1:1",
      shardCount: 4,
    });
    store = opened.store;
    return opened.store;
  }

  it("creates the deduplication table in a cluster created before FIFO queues when a broker starts", async () => {
    await (await open()).close();
    store = undefined;
    // The tables of a cluster that an older holdshelf created: everything but the deduplication table.
    await admin.query("DROP TABLE holdshelf_deduplication");
    const reopened = await open();
    await reopened.load();
    const record = { key: "d", messageId: scheduleEntry(t0).id, sequence: 1, expiresAt: t0 };
    await reopened.commit([
      { kind: "putQueue", queue: fifoQueueRecord("q.fifo", 1) },
      { kind: "putDeduplication", dataId: 1, record },
    ]);
    const [queue] = (await (await open()).load()).queues;
    expect(queue!.deduplications).toEqual([record]);
  });

  it("loads more deduplication records than one page of the load holds, across data spaces", async () => {
    const loader = await open();
    await loader.load();
    const id = scheduleEntry(t0).id;
    // Past the 10,000 rows of a page, with keys whose byte order is not a locale's ("é" after "z").
    const keys = (prefix: string, count: number): string[] =>
      Array.from({ length: count }, (_, n) => `${prefix}${n % 2 === 0 ? "é" : "z"}${n}`);
    const records = (dataId: number, prefix: string, count: number) =>
      keys(prefix, count).map(
        (key, sequence) =>
          ({ kind: "putDeduplication", dataId, record: { key, messageId: id, sequence, expiresAt: t0 } }) as const,
      );
    await loader.commit([
      { kind: "putQueue", queue: fifoQueueRecord("a.fifo", 1) },
      { kind: "putQueue", queue: fifoQueueRecord("b.fifo", 2) },
      ...records(1, "a", 9_999),
      ...records(2, "b", 3),
    ]);
    const { queues } = await (await open()).load();
    const loaded = new Map(
      queues.map((queue) => [queue.record.name, (queue.deduplications ?? []).map((record) => record.key).sort()]),
    );
    expect(loaded.get("a.fifo")).toEqual(keys("a", 9_999).sort());
    expect(loaded.get("b.fifo")).toEqual(keys("b", 3).sort());
  });

  it("takes a FIFO message in from the inbox with its group, sequence number and deduplication id", async () => {
    const sender = await open();
    await sender.load();
    await sender.commit([
      { kind: "putQueue", queue: fifoQueueRecord("dest.fifo", 1) },
      { kind: "putQueue", queue: queueRecord("dest", 2) },
      { kind: "putSequence", next: 3 },
    ]);
    const fifoEntry = scheduleEntry(t0, { group: "orders", sequence: 2 ** 40 + 1, receiveCount: 2 });
    // A dead-letter move's: the receive history it keeps comes along through the inbox.
    const standardEntry = scheduleEntry(t0, { receiveCount: 3, firstReceiveAt: t0 - 2_000, enqueuedAt: t0 });
    const deadLetter = { sourceQueue: "src.fifo", reason: "MAX_RECEIVE_COUNT_EXCEEDED" };
    await sender.commit([
      {
        kind: "putInbound",
        queue: "dest.fifo",
        entry: fifoEntry,
        content: { ...content("fifo"), deadLetter, deduplicationId: "dedup-7" },
      },
      { kind: "putInbound", queue: "dest", entry: standardEntry, content: content("standard") },
    ]);

    // Taken in as the owner of every shard takes it, at the epochs this store holds them.
    const { rows } = await admin.query<{ shard: number; epoch: string }>(
      "SELECT shard, epoch FROM holdshelf_shards ORDER BY shard",
    );
    const fence = { shards: rows.map((row) => row.shard), epochs: rows.map((row) => Number(row.epoch)) };
    const { fenceHeld, arrivals } = await takeInbound(admin, fence);
    expect(fenceHeld).toBe(true);
    const byQueue = new Map(arrivals.map((arrival) => [arrival.queue, arrival]));
    expect(byQueue.get("dest.fifo")).toMatchObject({ dataId: 1, entry: fifoEntry });
    expect(byQueue.get("dest.fifo")!.entry.group).toBe("orders");
    expect(byQueue.get("dest.fifo")!.entry.sequence).toBe(2 ** 40 + 1);
    expect(byQueue.get("dest")!.entry).toEqual(standardEntry);
    expect(byQueue.get("dest")!.entry.group).toBeUndefined();

    const [fifoRead] = await sender.readMessages(1, [{ id: fifoEntry.id, hasCheckpoint: false }]);
    expect(fifoRead!.deduplicationId).toBe("dedup-7");
    expect(fifoRead!.deadLetter).toEqual(deadLetter);
    expect(Buffer.from(fifoRead!.body).toString()).toBe("fifo");
    const [standardRead] = await sender.readMessages(2, [{ id: standardEntry.id, hasCheckpoint: false }]);
    expect(Object.keys(standardRead!)).not.toContain("deduplicationId");

    // And the queue's own deadline index now holds the message, group and all.
    const { queues } = await (await open()).load();
    const loaded = new Map(queues.map((queue) => [queue.record.name, queue.schedule.entries()]));
    expect(loaded.get("dest.fifo")).toEqual([fifoEntry]);
    expect(loaded.get("dest")).toEqual([standardEntry]);
  });
});
