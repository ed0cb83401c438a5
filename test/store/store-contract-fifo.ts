// The store contract's part for FIFO queues (run by describeStoreContract on
// every store): a message's group and sequence number, its deduplication id,
// the queue's deduplication records, and the FIFO settings of its record.
// Old data must still read as standard; standard data must stay as it was.
import { describe, expect, it } from "vitest";
import type { QueueRecord, StoredDeduplication, StoredQueue } from "../../src/store/store.js";
import { content, putMessage, queueRecord, readContents, scheduleEntry, t0 } from "./store-fixtures.js";
import type { StoreUnderTest } from "./store-contract.js";

/** A FIFO queue's record (content-based deduplication, per-group scope). */
function fifoQueueRecord(name: string, id: number, dataId = id): QueueRecord {
  const record = queueRecord(name, id, dataId);
  return {
    ...record,
    config: { ...record.config, fifo: { contentBasedDeduplication: true, deduplicationScope: "messageGroup" } },
  };
}

/** A deduplication record of message `messageId`, its window ending a minute after t0. */
function deduplication(key: string, messageId: string, sequence: number): StoredDeduplication {
  return { key, messageId, sequence, expiresAt: t0 + 60_000 };
}

/** A queue's deduplication records in key order (stores return them in any order). */
function deduplicationsOf(queue: StoredQueue): StoredDeduplication[] | undefined {
  return queue.deduplications && [...queue.deduplications].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The loaded queue of that name; fails the test if it is missing. */
function loadedQueue(queues: StoredQueue[], name: string): StoredQueue {
  const queue = queues.find((candidate) => candidate.record.name === name);
  expect(queue, `queue ${name} loaded`).toBeDefined();
  return queue!;
}

/** Length-prefixed UTF-8, as the content layout writes its fields. */
function field(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** The FIFO part of the contract, on the store `fixture()` holds for the current test. */
export function describeFifoContract(fixture: () => StoreUnderTest): void {
  /** Creates a queue (queue and data id `id`) from its record. */
  async function createQueue(record: QueueRecord): Promise<number> {
    await fixture().store.commit([
      { kind: "putQueue", queue: record },
      { kind: "putSequence", next: record.queueId + 1 },
    ]);
    return record.dataId;
  }

  /** Reopens the store and returns what it loads. */
  async function queuesAfterReopen(): Promise<StoredQueue[]> {
    return (await (await fixture().reopen()).load()).queues;
  }

  describe("FIFO queues", () => {
    it("keeps a FIFO message's group and sequence number through close and reopen", async () => {
      const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
      const first = scheduleEntry(t0, { group: "orders-1", sequence: 1 });
      // The longest group SQS allows, and a sequence number beyond 32 bits.
      const second = scheduleEntry(t0 + 1, { group: "g".repeat(128), sequence: 2 ** 40 + 3, leased: true, epoch: 2 });
      const sameGroup = scheduleEntry(t0 + 2, { group: "orders-1", sequence: 2 ** 40 + 4 });
      await fixture().store.commit([
        putMessage(dataId, first),
        putMessage(dataId, second),
        putMessage(dataId, sameGroup),
      ]);
      const { schedule } = loadedQueue(await queuesAfterReopen(), "q.fifo");
      expect(schedule.hasGroups).toBe(true);
      expect(schedule.entries()).toEqual([first, second, sameGroup]);
      expect([0, 1, 2].map((index) => schedule.groupOf(index))).toEqual(["orders-1", "g".repeat(128), "orders-1"]);
    });

    it("keeps the group and sequence number through reschedules that move the entry and that keep its ready time", async () => {
      const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
      const moved = scheduleEntry(t0, { group: "a", sequence: 10 });
      const inPlace = scheduleEntry(t0 + 5, { group: "b", sequence: 11 });
      await fixture().store.commit([putMessage(dataId, moved), putMessage(dataId, inPlace)]);
      const leased = { ...moved, readyAt: t0 + 30_000, leased: true, epoch: 1, receiveCount: 1, leaseStart: t0 };
      const renewed = { ...inPlace, leased: true, epoch: 3 };
      await fixture().store.commit([
        { kind: "reschedule", dataId, fromReadyAt: moved.readyAt, entry: leased },
        { kind: "reschedule", dataId, fromReadyAt: inPlace.readyAt, entry: renewed },
      ]);
      const entries = loadedQueue(await queuesAfterReopen(), "q.fifo").schedule.entries();
      expect(entries).toEqual([renewed, leased]);
      expect(entries.map(({ group, sequence }) => [group, sequence])).toEqual([
        ["b", 11],
        ["a", 10],
      ]);
    });

    it("loads a standard queue's messages with no group, sequence number or deduplication records", async () => {
      const dataId = await createQueue(queueRecord("q", 1));
      const entry = scheduleEntry(t0);
      await fixture().store.commit([putMessage(dataId, entry)]);
      const queue = loadedQueue(await queuesAfterReopen(), "q");
      expect(queue.schedule.hasGroups).toBe(false);
      const [loaded] = queue.schedule.entries();
      expect(loaded!.group).toBeUndefined();
      expect(loaded!.sequence).toBeUndefined();
      // A queue with no deduplication records carries none (the key is left out).
      expect(queue.deduplications).toBeUndefined();
    });

    it("keeps a message's deduplication id, and reads none (no key at all) on other messages", async () => {
      const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
      const deduplicated = scheduleEntry(t0, { group: "g", sequence: 1 });
      const deadLettered = scheduleEntry(t0, { group: "g", sequence: 2 });
      const standard = scheduleEntry(t0);
      const deadLetter = { sourceQueue: "jobs.fifo", reason: "MAX_RECEIVE_COUNT_EXCEEDED" };
      const typed = { n: { dataType: "Number", value: "7" } };
      await fixture().store.commit([
        putMessage(dataId, deduplicated, { ...content("one", { k: "v" }), deduplicationId: "dedup-1 ✓" }),
        putMessage(dataId, deadLettered, {
          ...content("two", {}, typed),
          deadLetter,
          deduplicationId: deadLettered.id,
        }),
        putMessage(dataId, standard, content("three")),
      ]);
      const [one, two, three] = await readContents(await fixture().reopen(), dataId, [
        deduplicated.id,
        deadLettered.id,
        standard.id,
      ]);
      expect(one!.deduplicationId).toBe("dedup-1 ✓");
      expect(Buffer.from(one!.body).toString()).toBe("one");
      expect(one!.attributes).toEqual({ k: "v" });
      expect(two!.deduplicationId).toBe(deadLettered.id);
      expect(two!.deadLetter).toEqual(deadLetter);
      expect(two!.typedAttributes).toEqual(typed);
      expect(Buffer.from(two!.body).toString()).toBe("two");
      expect(Object.keys(three!)).not.toContain("deduplicationId");
      expect(Object.keys(three!)).not.toContain("deadLetter");
    });

    it("still reads content stored in the layout before deduplication ids (version 3), with no deduplication id", async (ctx) => {
      if (fixture().putRawContent === undefined) return ctx.skip(); // a store that keeps no encoded values
      const dataId = await createQueue(queueRecord("q", 1));
      const entry = scheduleEntry(t0);
      await fixture().store.commit([putMessage(dataId, entry, content("placeholder"))]);
      // Version 3: one attribute, a dead-letter origin, one typed String attribute, then the body.
      const version3 = Buffer.concat([
        Buffer.of(3, 0, 0, 0, 1),
        field("k"),
        field("v"),
        Buffer.of(1),
        field("src"),
        field("why"),
        Buffer.of(0, 0, 0, 1),
        field("s"),
        field("String"),
        Buffer.of(0),
        field("text"),
        Buffer.from("old body"),
      ]);
      await fixture().putRawContent!(dataId, entry.id, version3);
      const [read] = await readContents(await fixture().reopen(), dataId, [entry.id]);
      expect(Buffer.from(read!.body).toString()).toBe("old body");
      expect(read!.attributes).toEqual({ k: "v" });
      expect(read!.deadLetter).toEqual({ sourceQueue: "src", reason: "why" });
      expect(read!.typedAttributes).toEqual({ s: { dataType: "String", value: "text" } });
      expect(Object.keys(read!)).not.toContain("deduplicationId");
    });

    it("keeps a queue record's FIFO settings, and leaves them out of a standard queue's", async () => {
      const fifo = fifoQueueRecord("q.fifo", 1);
      const queueScope = {
        ...fifoQueueRecord("p.fifo", 2),
        config: { ...fifo.config, fifo: { contentBasedDeduplication: false, deduplicationScope: "queue" as const } },
      };
      const standard = queueRecord("q", 3);
      await fixture().store.commit([
        { kind: "putQueue", queue: fifo },
        { kind: "putQueue", queue: queueScope },
        { kind: "putQueue", queue: standard },
      ]);
      const queues = await queuesAfterReopen();
      expect(loadedQueue(queues, "q.fifo").record).toEqual(fifo);
      expect(loadedQueue(queues, "q.fifo").record.config.fifo).toEqual({
        contentBasedDeduplication: true,
        deduplicationScope: "messageGroup",
      });
      expect(loadedQueue(queues, "p.fifo").record.config.fifo).toEqual({
        contentBasedDeduplication: false,
        deduplicationScope: "queue",
      });
      expect(loadedQueue(queues, "q").record).toEqual(standard);
      expect(Object.keys(loadedQueue(queues, "q").record.config)).not.toContain("fifo");
    });

    it("stores a FIFO setting's own fields only", async () => {
      const record = fifoQueueRecord("q.fifo", 1);
      const carrying = { ...record, config: { ...record.config, fifo: { ...record.config.fifo!, notStoredYet: 1 } } };
      await fixture().store.commit([{ kind: "putQueue", queue: carrying }]);
      const [loaded] = await queuesAfterReopen();
      expect(loaded!.record.config.fifo).toEqual(record.config.fifo);
      expect(Object.keys(loaded!.record.config.fifo!)).not.toContain("notStoredYet");
    });

    it("reads a queue record written before FIFO queues as a standard queue's", async (ctx) => {
      if (fixture().putRawQueueRecord === undefined) return ctx.skip(); // a store that keeps no encoded values
      await createQueue(queueRecord("old", 1));
      const old = { ...queueRecord("old", 1), createTime: t0 - 1000, updateTime: t0 - 500 };
      await fixture().putRawQueueRecord!("old", Buffer.from(JSON.stringify(old), "utf8"));
      const [loaded] = await queuesAfterReopen();
      expect(loaded!.record).toEqual(old);
      expect(loaded!.record.config.fifo).toBeUndefined();
      expect(Object.keys(loaded!.record.config)).not.toContain("fifo");
    });

    describe("deduplication records", () => {
      it("loads a queue's records, as last put, without the removed ones, through close and reopen", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const [a, b, c] = [scheduleEntry(t0), scheduleEntry(t0), scheduleEntry(t0)].map((entry) => entry.id);
        await fixture().store.commit([
          { kind: "putDeduplication", dataId, record: deduplication("g1/first", a!, 1) },
          { kind: "putDeduplication", dataId, record: deduplication("g1/second", b!, 2) },
          { kind: "putDeduplication", dataId, record: deduplication("gone", c!, 3) },
        ]);
        const overwritten = { ...deduplication("g1/second", c!, 5), expiresAt: t0 + 300_000 };
        await fixture().store.commit([
          { kind: "putDeduplication", dataId, record: overwritten },
          { kind: "removeDeduplication", dataId, key: "gone" },
          // Removing a record that is not stored changes nothing.
          { kind: "removeDeduplication", dataId, key: "never-put" },
        ]);
        const queue = loadedQueue(await queuesAfterReopen(), "q.fifo");
        expect(deduplicationsOf(queue)).toEqual([deduplication("g1/first", a!, 1), overwritten]);
      });

      it("applies a commit's puts and removes of one key in order: the last one wins", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const id = scheduleEntry(t0).id;
        await fixture().store.commit([
          { kind: "putDeduplication", dataId, record: deduplication("removed-last", id, 1) },
          { kind: "removeDeduplication", dataId, key: "removed-last" },
          { kind: "removeDeduplication", dataId, key: "put-last" },
          { kind: "putDeduplication", dataId, record: deduplication("put-last", id, 1) },
          { kind: "putDeduplication", dataId, record: deduplication("put-last", id, 2) },
        ]);
        expect(deduplicationsOf(loadedQueue(await queuesAfterReopen(), "q.fifo"))).toEqual([
          deduplication("put-last", id, 2),
        ]);
      });

      it("keeps keys of any text, and times and sequence numbers beyond 32 bits, exactly", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const id = scheduleEntry(t0).id;
        const records = [
          { key: "grüße/ключ 🎉", messageId: id, sequence: 2 ** 52 + 1, expiresAt: t0 + 300_000 },
          {
            key: `${"x".repeat(128)}/${"!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".repeat(4)}`,
            messageId: id,
            sequence: 0,
            expiresAt: 2 ** 45,
          },
        ];
        await fixture().store.commit(records.map((record) => ({ kind: "putDeduplication", dataId, record }) as const));
        expect(deduplicationsOf(loadedQueue(await queuesAfterReopen(), "q.fifo"))).toEqual(
          [...records].sort((x, y) => (x.key < y.key ? -1 : 1)),
        );
      });

      it("loads expired records too: the broker, not the store, judges the window", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const expired = { ...deduplication("old", scheduleEntry(t0).id, 1), expiresAt: 1 };
        await fixture().store.commit([{ kind: "putDeduplication", dataId, record: expired }]);
        expect(deduplicationsOf(loadedQueue(await queuesAfterReopen(), "q.fifo"))).toEqual([expired]);
      });

      it("loads each queue's records of its current data space only", async () => {
        await createQueue(fifoQueueRecord("a.fifo", 1));
        await createQueue(fifoQueueRecord("b.fifo", 2));
        const id = scheduleEntry(t0).id;
        await fixture().store.commit([
          { kind: "putDeduplication", dataId: 1, record: deduplication("in-a", id, 1) },
          { kind: "putDeduplication", dataId: 2, record: deduplication("in-b", id, 1) },
          { kind: "putDeduplication", dataId: 3, record: deduplication("after-purge", id, 2) },
        ]);
        // Queue b is purged: it moves to data space 3.
        await fixture().store.commit([{ kind: "putQueue", queue: fifoQueueRecord("b.fifo", 2, 3) }]);
        const queues = await queuesAfterReopen();
        expect(deduplicationsOf(loadedQueue(queues, "a.fifo"))).toEqual([deduplication("in-a", id, 1)]);
        expect(deduplicationsOf(loadedQueue(queues, "b.fifo"))).toEqual([deduplication("after-purge", id, 2)]);
      });

      it("forgets a data space's records on dropData (a purge), keeping other data spaces'", async () => {
        await createQueue(fifoQueueRecord("a.fifo", 1));
        await createQueue(fifoQueueRecord("b.fifo", 2));
        const id = scheduleEntry(t0).id;
        await fixture().store.commit([
          { kind: "putDeduplication", dataId: 1, record: deduplication("dropped", id, 1) },
          { kind: "putDeduplication", dataId: 2, record: deduplication("kept", id, 1) },
        ]);
        await fixture().store.dropData(1);
        const queues = await queuesAfterReopen();
        expect(loadedQueue(queues, "a.fifo").deduplications).toBeUndefined();
        expect(deduplicationsOf(loadedQueue(queues, "b.fifo"))).toEqual([deduplication("kept", id, 1)]);
      });

      it("frees the records of a data space no queue uses at the next load", async () => {
        const id = scheduleEntry(t0).id;
        // Records left in data space 5 by a purge or delete that a crash cut short.
        await fixture().store.commit([{ kind: "putDeduplication", dataId: 5, record: deduplication("orphan", id, 1) }]);
        await fixture().store.load();
        await createQueue(fifoQueueRecord("five.fifo", 5));
        expect(loadedQueue(await queuesAfterReopen(), "five.fifo").deduplications).toBeUndefined();
      });

      it("reads a record before commit() returns: changing it after changes nothing stored", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const record = { ...deduplication("k", scheduleEntry(t0).id, 1) };
        const expected = { ...record };
        const written = fixture().store.commit([{ kind: "putDeduplication", dataId, record }]);
        Object.assign(record, { key: "changed", sequence: 9, expiresAt: 0 });
        await written;
        expect(deduplicationsOf(loadedQueue((await fixture().store.load()).queues, "q.fifo"))).toEqual([expected]);
      });

      it("refuses a whole commit with a record's data id beyond 32 bits or a malformed message id", async () => {
        const dataId = await createQueue(fifoQueueRecord("q.fifo", 1));
        const id = scheduleEntry(t0).id;
        const good = { kind: "putDeduplication", dataId, record: deduplication("good", id, 1) } as const;
        await expect(
          fixture().store.commit([
            good,
            { kind: "putDeduplication", dataId: 2 ** 32, record: deduplication("bad", id, 2) },
          ]),
        ).rejects.toThrow();
        await expect(
          fixture().store.commit([good, { kind: "removeDeduplication", dataId: -1, key: "bad" }]),
        ).rejects.toThrow();
        await expect(
          fixture().store.commit([good, { kind: "putDeduplication", dataId, record: deduplication("bad", "xyz", 2) }]),
        ).rejects.toThrow();
        expect(loadedQueue(await queuesAfterReopen(), "q.fifo").deduplications).toBeUndefined();
      });
    });
  });
}
