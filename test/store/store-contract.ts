// The store contract: what the broker needs of any Store, as one set of
// tests that every implementation runs on a fresh store per test (the
// abstract-level habit). A new store adds one *.test.ts calling
// describeStoreContract; behaviour only one engine has stays in its own file.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HoldshelfError } from "../../src/errors/holdshelf-error.js";
import { isStorageUnavailable } from "../../src/store/storage-unavailable.js";
import type { MessageContent, ScheduleEntry, Store, StoredQueue, TypedAttribute } from "../../src/store/store.js";
import type { WriteFault } from "../support/write-fault.js";
import { describeFifoContract } from "./store-contract-fifo.js";
import { content, putMessage, queueRecord, readContents, scheduleEntry, t0 } from "./store-fixtures.js";

/** A fresh store for one test, and what the contract needs around it. */
export interface StoreUnderTest {
  /** The store; replaced by `reopen`. */
  store: Store;
  /** Closes the store and opens a new one on the same data, as a restart would; returns it. */
  reopen(): Promise<Store>;
  /** Makes writes fail as a failing disk would; absent where the store has no such failure. */
  readonly writeFault?: WriteFault;
  /** Replaces a stored message's encoded content with `value`, as an older holdshelf wrote it; absent where nothing is encoded. */
  readonly putRawContent?: (dataId: number, id: string, value: Buffer) => Promise<void>;
  /** Replaces a stored queue record with `value`, as an older holdshelf wrote it; absent where nothing is encoded. */
  readonly putRawQueueRecord?: (name: string, value: Buffer) => Promise<void>;
  /** Closes the store (if still open) and frees everything it used. */
  dispose(): Promise<void>;
}

/** The loaded queue of that name; fails the test if it is missing. */
function loadedQueue(queues: StoredQueue[], name: string): StoredQueue {
  const queue = queues.find((candidate) => candidate.record.name === name);
  expect(queue, `queue ${name} loaded`).toBeDefined();
  return queue!;
}

/** Content as plain values, so that Buffer and Uint8Array bodies compare equal. */
function plain(value: MessageContent | undefined): { body: string; attributes: Record<string, string> } | undefined {
  return value === undefined
    ? undefined
    : { body: Buffer.from(value.body).toString("utf8"), attributes: { ...value.attributes } };
}

/** Typed attributes as plain values: a binary value as its bytes in UTF-8, so that Buffer and Uint8Array compare equal. */
function typedPlain(
  typed: MessageContent["typedAttributes"],
): Record<string, { dataType: string; text?: string; binary?: string }> {
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [
      name,
      typeof value === "string" ? { dataType, text: value } : { dataType, binary: Buffer.from(value).toString("utf8") },
    ]),
  );
}

/** An I/O error as LevelDB words it, path and all. */
function diskFull(): Error {
  return new Error("IO error: /somewhere/secret-path/000005.log: No space left on device");
}

/** Runs the store contract against the stores `makeFreshStore` opens, one per test. */
export function describeStoreContract(name: string, makeFreshStore: () => Promise<StoreUnderTest>): void {
  describe(`${name} (store contract)`, () => {
    let fx: StoreUnderTest;
    beforeEach(async () => {
      fx = await makeFreshStore();
    });
    afterEach(async () => {
      fx.writeFault?.inject(undefined);
      await fx.dispose();
    });

    /** Creates queue "q" (queue and data id 1) and returns its data id. */
    async function createQueue(queueName = "q", id = 1): Promise<number> {
      await fx.store.commit([
        { kind: "putQueue", queue: queueRecord(queueName, id) },
        { kind: "putSequence", next: id + 1 },
      ]);
      return id;
    }

    /** Reopens the store and returns the schedule of queue `queueName`. */
    async function scheduleAfterReopen(queueName = "q"): Promise<ScheduleEntry[]> {
      const { queues } = await (await fx.reopen()).load();
      return loadedQueue(queues, queueName).schedule.entries();
    }

    describe("load", () => {
      it("finds no queues, sequence 1 and a 32-byte handle key in a new store", async () => {
        const state = await fx.store.load();
        expect(state.queues).toEqual([]);
        expect(state.nextSequence).toBe(1);
        expect(state.handleKey).toHaveLength(32);
      });

      it("keeps the same handle key across close and reopen", async () => {
        const first = Buffer.from((await fx.store.load()).handleKey);
        const again = Buffer.from((await fx.store.load()).handleKey);
        const reopened = Buffer.from((await (await fx.reopen()).load()).handleKey);
        expect(again.equals(first)).toBe(true);
        expect(reopened.equals(first)).toBe(true);
      });

      it("makes a different handle key for each new store", async () => {
        const first = Buffer.from((await fx.store.load()).handleKey);
        const other = await makeFreshStore();
        try {
          const second = Buffer.from((await other.store.load()).handleKey);
          expect(second.equals(first)).toBe(false);
        } finally {
          await other.dispose();
        }
      });

      it("hands out copies: changing what load returned changes nothing stored", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, entry)]);
        const [loaded] = (await fx.store.load()).queues;
        // The broker takes the loaded columns over as its own and changes them.
        loaded!.schedule.readyAt[0] = t0 + 1;
        loaded!.schedule.epoch[0] = 9;
        expect(loadedQueue((await fx.store.load()).queues, "q").schedule.entries()).toEqual([entry]);
      });
    });

    describe("queue records", () => {
      it("round-trips putQueue and putSequence through close and reopen", async () => {
        const record = {
          ...queueRecord("orders-é", 3, 9),
          config: { ...queueRecord("x", 1).config, visibilityTimeoutMs: 1234, maxInFlight: 7 },
        };
        await fx.store.commit([
          { kind: "putQueue", queue: record },
          { kind: "putQueue", queue: queueRecord("alpha", 1) },
          { kind: "putSequence", next: 10 },
        ]);
        const state = await (await fx.reopen()).load();
        expect(state.nextSequence).toBe(10);
        expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("alpha", 1), record]);
        expect(state.queues.map((queue) => queue.schedule.entries())).toEqual([[], []]);
      });

      it("keeps a queue's tags and update time", async () => {
        const tags = Object.fromEntries([
          ["team", "payments"],
          ["", ""],
          ["__proto__", "kept"],
          ["ключ", "値 🎉"],
        ]) as Record<string, string>;
        const record = {
          ...queueRecord("q", 1),
          config: { ...queueRecord("q", 1).config, tags },
          updateTime: t0 + 5000,
        };
        await fx.store.commit([{ kind: "putQueue", queue: record }]);
        const [loaded] = (await (await fx.reopen()).load()).queues.map((queue) => queue.record);
        expect(loaded).toEqual(record);
        expect(Object.entries(loaded!.config.tags)).toEqual(Object.entries(tags));
      });

      it("reads a queue record written before tags and update times as no tags, updated at creation", async (ctx) => {
        if (fx.putRawQueueRecord === undefined) return ctx.skip(); // a store that keeps no encoded values
        await createQueue("old");
        const { tags: _, ...configBefore } = queueRecord("old", 1).config;
        // The JSON layout holdshelf 0.1.0 wrote: no config.tags, no updateTime.
        const old = { name: "old", queueId: 1, dataId: 1, config: configBefore, createTime: t0 - 1000 };
        await fx.putRawQueueRecord("old", Buffer.from(JSON.stringify(old), "utf8"));
        const [loaded] = (await (await fx.reopen()).load()).queues.map((queue) => queue.record);
        expect(loaded).toEqual({ ...old, config: { ...configBefore, tags: {} }, updateTime: t0 - 1000 });
      });

      it("keeps both policies of a queue's configuration", async () => {
        const record = {
          ...queueRecord("q", 1),
          config: {
            ...queueRecord("q", 1).config,
            redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 5 },
            retryPolicy: { minBackoffMs: 1000, maxBackoffMs: 60_000 },
          },
        };
        await fx.store.commit([{ kind: "putQueue", queue: record }]);
        expect((await (await fx.reopen()).load()).queues.map((queue) => queue.record)).toEqual([record]);
      });

      it("stores a queue record's own fields only, whatever else the object passed carries", async () => {
        const record = queueRecord("q", 1);
        const carrying = { ...record, cached: true, config: { ...record.config, notStoredYet: 5 } };
        await fx.store.commit([{ kind: "putQueue", queue: carrying }]);
        const [loaded] = (await (await fx.reopen()).load()).queues;
        expect(loaded!.record).toEqual(record);
        expect(Object.keys(loaded!.record.config)).not.toContain("notStoredYet");
      });

      it("replaces a queue record put again under the same name", async () => {
        await createQueue("q", 1);
        await fx.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1, 2) }]);
        const state = await (await fx.reopen()).load();
        expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("q", 1, 2)]);
      });

      it("forgets a queue after removeQueue", async () => {
        await createQueue("gone", 1);
        await createQueue("kept", 2);
        await fx.store.commit([{ kind: "removeQueue", name: "gone" }]);
        const state = await (await fx.reopen()).load();
        expect(state.queues.map((queue) => queue.record.name)).toEqual(["kept"]);
        expect(state.nextSequence).toBe(3);
      });
    });

    describe("messages", () => {
      it("keeps every field of a message's state through close and reopen", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0 + 30_000, {
          leased: true,
          receiveCount: 3,
          epoch: 4,
          sendTime: t0 - 5000,
          enqueuedAt: t0 - 4000,
          firstReceiveAt: t0 - 3000,
          leaseStart: t0 + 1000,
          size: 70_000,
        });
        await fx.store.commit([putMessage(dataId, entry)]);
        expect(await scheduleAfterReopen()).toEqual([entry]);
      });

      it("loads the schedule in ready-time order, then by id", async () => {
        const dataId = await createQueue();
        const late = scheduleEntry(t0 + 5000);
        const early = scheduleEntry(t0 - 5000);
        const tieHigh = scheduleEntry(t0, { id: "f".repeat(32) });
        const tieLow = scheduleEntry(t0, { id: `${"0".repeat(31)}1` });
        await fx.store.commit([late, tieHigh, early, tieLow].map((entry) => putMessage(dataId, entry)));
        const schedule = await scheduleAfterReopen();
        expect(schedule.map((entry) => entry.id)).toEqual([early.id, tieLow.id, tieHigh.id, late.id]);
      });

      it("orders ready times beyond 32 bits numerically, not by their low bits", async () => {
        const dataId = await createQueue();
        // 2^32 + 1 has smaller low 32 bits than 2^32 - 1.
        const high = scheduleEntry(2 ** 32 + 1);
        const low = scheduleEntry(2 ** 32 - 1);
        await fx.store.commit([putMessage(dataId, high), putMessage(dataId, low)]);
        expect((await scheduleAfterReopen()).map((entry) => entry.readyAt)).toEqual([2 ** 32 - 1, 2 ** 32 + 1]);
      });

      it("moves a message's index entry on reschedule, leaving one entry at the new ready time", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        const other = scheduleEntry(t0 + 1000);
        await fx.store.commit([putMessage(dataId, entry), putMessage(dataId, other)]);
        const leased = {
          ...entry,
          readyAt: t0 + 2000,
          leased: true,
          receiveCount: 1,
          epoch: 1,
          leaseStart: t0,
          firstReceiveAt: t0,
        };
        await fx.store.commit([{ kind: "reschedule", dataId, fromReadyAt: t0, entry: leased }]);
        expect(await scheduleAfterReopen()).toEqual([other, leased]);
      });

      it("updates the state in place when a reschedule keeps the ready time", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0 + 1000);
        await fx.store.commit([putMessage(dataId, entry)]);
        const changed = { ...entry, leased: true, epoch: 2, receiveCount: 2 };
        await fx.store.commit([{ kind: "reschedule", dataId, fromReadyAt: entry.readyAt, entry: changed }]);
        expect(await scheduleAfterReopen()).toEqual([changed]);
      });

      it("keeps the last of several reschedules of one message in one commit", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, entry)]);
        const first = { ...entry, readyAt: t0 + 100, epoch: 1 };
        const second = { ...entry, readyAt: t0 + 50, epoch: 2 };
        await fx.store.commit([
          { kind: "reschedule", dataId, fromReadyAt: t0, entry: first },
          { kind: "reschedule", dataId, fromReadyAt: t0 + 100, entry: second },
        ]);
        expect(await scheduleAfterReopen()).toEqual([second]);
      });

      it("keeps an index entry a reschedule left behind from the wrong ready time: both load, in ready order", async () => {
        // What a lost delete of an old entry leaves; the broker keeps the latest delivery.
        const dataId = await createQueue();
        const entry = scheduleEntry(t0 + 1000, { leased: true, epoch: 1 });
        await fx.store.commit([putMessage(dataId, entry)]);
        const stale = { ...entry, readyAt: 5, epoch: 0, leased: false };
        await fx.store.commit([{ kind: "reschedule", dataId, fromReadyAt: 5, entry: stale }]);
        expect(await scheduleAfterReopen()).toEqual([stale, entry]);
      });

      it("removes a message's index entry and content on removeMessage", async () => {
        const dataId = await createQueue();
        const removed = scheduleEntry(t0 + 500);
        const kept = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, removed, content("bye")), putMessage(dataId, kept, content("stay"))]);
        await fx.store.commit([
          { kind: "removeMessage", dataId, id: removed.id, readyAt: removed.readyAt, hasCheckpoint: false },
        ]);
        expect(await scheduleAfterReopen()).toEqual([kept]);
        const contents = await readContents(fx.store, dataId, [removed.id, kept.id]);
        expect(contents.map(plain)).toEqual([undefined, { body: "stay", attributes: {} }]);
      });

      it("keeps each queue's messages in its own data space", async () => {
        await createQueue("a", 1);
        await createQueue("b", 2);
        const inA = scheduleEntry(t0);
        const inB = scheduleEntry(t0);
        await fx.store.commit([putMessage(1, inA, content("A")), putMessage(2, inB, content("B"))]);
        const { queues } = await (await fx.reopen()).load();
        expect(loadedQueue(queues, "a").schedule.entries()).toEqual([inA]);
        expect(loadedQueue(queues, "b").schedule.entries()).toEqual([inB]);
        expect((await readContents(fx.store, 1, [inA.id, inB.id])).map(plain)).toEqual([
          { body: "A", attributes: {} },
          undefined,
        ]);
      });
    });

    describe("readMessages", () => {
      it("returns bodies and attributes in the order asked, undefined for missing ids", async () => {
        const dataId = await createQueue();
        const plainEntry = scheduleEntry(t0);
        const unicode = scheduleEntry(t0);
        const empty = scheduleEntry(t0);
        const missing = scheduleEntry(t0).id;
        await fx.store.commit([
          putMessage(dataId, plainEntry, content("body one", { kind: "plain", "": "" })),
          putMessage(dataId, unicode, content("héllo wörld ✓ 🚀", { ключ: "値 🎉", emoji: "👍🏽" })),
          putMessage(dataId, empty, content("", {})),
        ]);
        const contents = await readContents(await fx.reopen(), dataId, [unicode.id, missing, empty.id, plainEntry.id]);
        expect(contents.map(plain)).toEqual([
          { body: "héllo wörld ✓ 🚀", attributes: { ключ: "値 🎉", emoji: "👍🏽" } },
          undefined,
          { body: "", attributes: {} },
          { body: "body one", attributes: { kind: "plain", "": "" } },
        ]);
        expect(contents[2]!.body).toHaveLength(0);
      });

      it("keeps a message's trace header through close and reopen, apart from its typed attributes", async () => {
        const dataId = await createQueue();
        const traced = scheduleEntry(t0);
        const untraced = scheduleEntry(t0);
        const traceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
        await fx.store.commit([
          putMessage(dataId, traced, {
            body: Buffer.from("t"),
            attributes: {},
            typedAttributes: { n: { dataType: "Number", value: "1" } },
            traceHeader,
          }),
          putMessage(dataId, untraced, content("u", {})),
        ]);
        const [read, other] = await readContents(await fx.reopen(), dataId, [traced.id, untraced.id]);
        expect(read!.traceHeader).toBe(traceHeader);
        expect(typedPlain(read!.typedAttributes)).toEqual({ n: { dataType: "Number", text: "1" } });
        expect(other!.traceHeader).toBeUndefined();
      });

      it("returns binary bodies byte for byte", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        const body = Uint8Array.from({ length: 256 }, (_, index) => index);
        await fx.store.commit([putMessage(dataId, entry, { body, attributes: { a: "b" }, typedAttributes: {} })]);
        const [read] = await readContents(fx.store, dataId, [entry.id]);
        expect(Buffer.from(read!.body).equals(Buffer.from(body))).toBe(true);
      });

      it("keeps an attribute named __proto__ as an attribute", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        const attributes = Object.fromEntries([
          ["__proto__", "x"],
          ["k", "v"],
        ]) as Record<string, string>;
        await fx.store.commit([putMessage(dataId, entry, { body: Buffer.from("b"), attributes, typedAttributes: {} })]);
        const [read] = await readContents(await fx.reopen(), dataId, [entry.id]);
        expect(Object.entries(read!.attributes)).toEqual([
          ["__proto__", "x"],
          ["k", "v"],
        ]);
      });

      it("keeps a dead-lettered message's origin, and reads none on other messages", async () => {
        const dataId = await createQueue();
        const moved = scheduleEntry(t0);
        const other = scheduleEntry(t0);
        const deadLetter = { sourceQueue: "jobs", reason: "max receive count 3 reached" };
        await fx.store.commit([
          putMessage(dataId, moved, { ...content("failed"), deadLetter }),
          putMessage(dataId, other, content("fine")),
        ]);
        const [readMoved, readOther] = await readContents(await fx.reopen(), dataId, [moved.id, other.id]);
        expect(readMoved!.deadLetter).toEqual(deadLetter);
        expect(readOther!.deadLetter).toBeUndefined();
      });

      it("keeps a dead-lettered message's receive history beside its origin: count, first receive and arrival (when it was dead-lettered)", async () => {
        const dataId = await createQueue();
        // As a dead-letter move writes it: the count and first receive of the source queue, arrived now.
        const moved = scheduleEntry(t0, { receiveCount: 5, firstReceiveAt: t0 - 60_000, enqueuedAt: t0, epoch: 5 });
        const deadLetter = { sourceQueue: "jobs", reason: "MAX_RECEIVE_COUNT_EXCEEDED" };
        await fx.store.commit([putMessage(dataId, moved, { ...content("failed"), deadLetter })]);
        expect(await scheduleAfterReopen()).toEqual([moved]);
        const [read] = await readContents(fx.store, dataId, [moved.id]);
        expect(read!.deadLetter).toEqual(deadLetter);
      });

      it("keeps typed attributes of every kind exactly, binary values as bytes, empty values as empty", async () => {
        const dataId = await createQueue();
        const typed = scheduleEntry(t0);
        const other = scheduleEntry(t0);
        const bytes = Uint8Array.from({ length: 256 }, (_, index) => index);
        const typedAttributes = Object.fromEntries<TypedAttribute>([
          ["s", { dataType: "String", value: "héllo ✓" }],
          ["custom", { dataType: "String.ünï code", value: "" }],
          ["n", { dataType: "Number", value: "-1.5e10" }],
          ["int", { dataType: "Number.int", value: "42" }],
          ["b", { dataType: "Binary", value: bytes }],
          ["gz", { dataType: "Binary.gzip", value: new Uint8Array(0) }],
          ["__proto__", { dataType: "String", value: "kept" }],
        ]);
        const deadLetter = { sourceQueue: "jobs", reason: "MAX_RECEIVE_COUNT_EXCEEDED" };
        await fx.store.commit([
          putMessage(dataId, typed, { ...content("typed", { plain: "p" }, typedAttributes), deadLetter }),
          putMessage(dataId, other, content("none")),
        ]);
        const [read, readOther] = await readContents(await fx.reopen(), dataId, [typed.id, other.id]);
        expect(plain(read)).toEqual({ body: "typed", attributes: { plain: "p" } });
        expect(read!.deadLetter).toEqual(deadLetter);
        expect(Object.keys(read!.typedAttributes)).toEqual(["s", "custom", "n", "int", "b", "gz", "__proto__"]);
        expect(typedPlain(read!.typedAttributes)).toEqual(typedPlain(typedAttributes));
        const binary = read!.typedAttributes["b"]!.value;
        expect(binary).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(binary as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
        expect(read!.typedAttributes["gz"]!.value).toBeInstanceOf(Uint8Array);
        expect(read!.typedAttributes["custom"]!.value).toBe("");
        expect(readOther!.typedAttributes).toEqual({});
      });

      it("still reads content stored in the layout before typed attributes (version 2)", async (ctx) => {
        if (fx.putRawContent === undefined) return ctx.skip(); // a store that keeps no encoded values
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, entry, content("placeholder"))]);
        // Version 2, one attribute k=v, a dead-letter origin, then the body: as holdshelf 0.1.0 wrote it.
        const field = (text: string): Buffer => {
          const bytes = Buffer.from(text, "utf8");
          const length = Buffer.alloc(4);
          length.writeUInt32BE(bytes.length);
          return Buffer.concat([length, bytes]);
        };
        const version2 = Buffer.concat([
          Buffer.of(2, 0, 0, 0, 1),
          field("k"),
          field("v"),
          Buffer.of(1),
          field("src"),
          field("why"),
          Buffer.from("old body"),
        ]);
        await fx.putRawContent(dataId, entry.id, version2);
        const [read] = await readContents(await fx.reopen(), dataId, [entry.id]);
        expect(plain(read)).toEqual({ body: "old body", attributes: { k: "v" } });
        expect(read!.deadLetter).toEqual({ sourceQueue: "src", reason: "why" });
        expect(read!.typedAttributes).toEqual({});
      });

      it("returns undefined for every id of an unknown data space", async () => {
        expect(await readContents(fx.store, 42, [scheduleEntry(t0).id, scheduleEntry(t0).id])).toEqual([
          undefined,
          undefined,
        ]);
      });
    });

    describe("checkpoints", () => {
      it("reads a checkpoint with the content, survives a reopen, and keeps the flag in the index entry", async () => {
        const dataId = 1;
        const entry = scheduleEntry(t0, { hasCheckpoint: true });
        await fx.store.commit([
          putMessage(dataId, entry),
          { kind: "putCheckpoint", dataId, id: entry.id, checkpoint: Buffer.from("half way") },
        ]);
        const reopened = await fx.reopen();
        const [read] = await reopened.readMessages(dataId, [{ id: entry.id, hasCheckpoint: true }]);
        expect(Buffer.from(read!.checkpoint!).toString()).toBe("half way");
        expect(Buffer.from(read!.body).toString()).toBe("hello");
        await reopened.commit([{ kind: "putQueue", queue: queueRecord("q", dataId) }]);
        const [queue] = (await (await fx.reopen()).load()).queues;
        expect(queue!.schedule.entries()[0]!.hasCheckpoint).toBe(true);
      });

      it("reads a checkpoint only where asked for, and none where none was saved", async () => {
        const dataId = await createQueue();
        const saved = scheduleEntry(t0, { hasCheckpoint: true });
        const never = scheduleEntry(t0);
        await fx.store.commit([
          putMessage(dataId, saved),
          putMessage(dataId, never),
          { kind: "putCheckpoint", dataId, id: saved.id, checkpoint: Buffer.from("progress") },
        ]);
        const reads = await fx.store.readMessages(dataId, [
          { id: saved.id, hasCheckpoint: false },
          { id: never.id, hasCheckpoint: true },
          { id: saved.id, hasCheckpoint: true },
        ]);
        expect(reads.map((read) => read?.checkpoint && Buffer.from(read.checkpoint).toString())).toEqual([
          undefined,
          undefined,
          "progress",
        ]);
        expect(reads.map((read) => read && Buffer.from(read.body).toString())).toEqual(["hello", "hello", "hello"]);
      });

      it("replaces a checkpoint saved again", async () => {
        const dataId = await createQueue();
        const entry = scheduleEntry(t0, { hasCheckpoint: true });
        await fx.store.commit([
          putMessage(dataId, entry),
          { kind: "putCheckpoint", dataId, id: entry.id, checkpoint: Buffer.from("one") },
        ]);
        await fx.store.commit([{ kind: "putCheckpoint", dataId, id: entry.id, checkpoint: Buffer.from("two") }]);
        const [read] = await fx.store.readMessages(dataId, [{ id: entry.id, hasCheckpoint: true }]);
        expect(Buffer.from(read!.checkpoint!).toString()).toBe("two");
      });

      it("removes a checkpoint with its message and with its data space", async () => {
        const entry = scheduleEntry(t0, { hasCheckpoint: true });
        const other = scheduleEntry(t0, { hasCheckpoint: true });
        await fx.store.commit([
          putMessage(1, entry),
          { kind: "putCheckpoint", dataId: 1, id: entry.id, checkpoint: Buffer.from("a") },
          putMessage(2, other),
          { kind: "putCheckpoint", dataId: 2, id: other.id, checkpoint: Buffer.from("b") },
        ]);
        await fx.store.commit([
          { kind: "removeMessage", dataId: 1, id: entry.id, readyAt: entry.readyAt, hasCheckpoint: true },
        ]);
        await fx.store.dropData(2);
        // Put the contents back: only a checkpoint left behind would show up.
        await fx.store.commit([putMessage(1, entry), putMessage(2, other)]);
        expect(
          (await fx.store.readMessages(1, [{ id: entry.id, hasCheckpoint: true }]))[0]!.checkpoint,
        ).toBeUndefined();
        expect(
          (await fx.store.readMessages(2, [{ id: other.id, hasCheckpoint: true }]))[0]!.checkpoint,
        ).toBeUndefined();
      });
    });

    describe("dropData", () => {
      it("removes a data space's contents and index entries, and no other", async () => {
        await createQueue("a", 1);
        await createQueue("b", 2);
        const dropped = scheduleEntry(t0);
        const kept = scheduleEntry(t0);
        await fx.store.commit([putMessage(1, dropped), putMessage(2, kept)]);
        await fx.store.dropData(1);
        expect(await readContents(fx.store, 1, [dropped.id])).toEqual([undefined]);
        const { queues } = await (await fx.reopen()).load();
        expect(loadedQueue(queues, "a").schedule.entries()).toEqual([]);
        expect(loadedQueue(queues, "b").schedule.entries()).toEqual([kept]);
        expect((await readContents(fx.store, 2, [kept.id])).map(plain)).toEqual([{ body: "hello", attributes: {} }]);
      });

      it("leaves queue records and the sequence alone", async () => {
        await createQueue("a", 1);
        await fx.store.dropData(1);
        const state = await fx.store.load();
        expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("a", 1)]);
        expect(state.nextSequence).toBe(2);
      });
    });

    describe("orphaned data", () => {
      it("is dropped by the next load when no queue record references its data id", async () => {
        await createQueue("q", 1);
        const orphan = scheduleEntry(t0);
        const live = scheduleEntry(t0);
        // The queue moved to data id 2 (a purge) before data id 1 was freed.
        await fx.store.commit([putMessage(1, orphan), putMessage(2, live), putMessage(5, scheduleEntry(t0))]);
        await fx.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1, 2) }]);
        expect(await readContents(fx.store, 1, [orphan.id])).not.toEqual([undefined]);

        const { queues } = await fx.store.load();
        expect(loadedQueue(queues, "q").schedule.entries()).toEqual([live]);
        expect(await readContents(fx.store, 1, [orphan.id])).toEqual([undefined]);
        expect((await readContents(fx.store, 2, [live.id])).map(plain)).toEqual([{ body: "hello", attributes: {} }]);

        // And the orphans' index entries are gone too: a queue pointed back at
        // data id 1 or 5 finds nothing there.
        await fx.store.commit([
          { kind: "putQueue", queue: queueRecord("back", 7, 1) },
          { kind: "putQueue", queue: queueRecord("five", 8, 5) },
        ]);
        const reloaded = await (await fx.reopen()).load();
        expect(loadedQueue(reloaded.queues, "back").schedule.entries()).toEqual([]);
        expect(loadedQueue(reloaded.queues, "five").schedule.entries()).toEqual([]);
      });

      it("includes the messages of a removed queue", async () => {
        const dataId = await createQueue("q", 1);
        const entry = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, entry)]);
        await fx.store.commit([{ kind: "removeQueue", name: "q" }]);
        expect(await readContents(fx.store, dataId, [entry.id])).not.toEqual([undefined]);
        await fx.store.load();
        expect(await readContents(fx.store, dataId, [entry.id])).toEqual([undefined]);
      });
    });

    describe("commit", () => {
      it("resolves an empty commit", async () => {
        await expect(fx.store.commit([])).resolves.toBeUndefined();
      });

      it("applies commits in call order", async () => {
        const commits = [
          fx.store.commit([
            { kind: "putQueue", queue: queueRecord("q", 1) },
            { kind: "putSequence", next: 2 },
          ]),
          fx.store.commit([
            { kind: "removeQueue", name: "q" },
            { kind: "putSequence", next: 3 },
          ]),
          fx.store.commit([{ kind: "putQueue", queue: queueRecord("q", 1, 4) }]),
        ];
        await Promise.all(commits);
        const state = await (await fx.reopen()).load();
        expect(state.queues.map((queue) => queue.record)).toEqual([queueRecord("q", 1, 4)]);
        expect(state.nextSequence).toBe(3);
      });

      it("resolves an empty commit only once the commits before it are written", async () => {
        // The broker answers a retried Delete, with nothing left to write, on this.
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        let written = false;
        void fx.store.commit([putMessage(dataId, entry)]).then(() => (written = true));
        await fx.store.commit([]);
        expect(written).toBe(true);
        expect(loadedQueue((await fx.store.load()).queues, "q").schedule.entries()).toEqual([entry]);
      });

      it("reads every op before commit() returns: changes made to them after it never reach the store", async () => {
        // The broker passes its live messages and changes them while the write is under way (rescheduleOp).
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        await fx.store.commit([putMessage(dataId, entry)]);
        const moved: ScheduleEntry = { ...entry, readyAt: t0 + 1000, leased: true, epoch: 1, receiveCount: 1 };
        const sent: ScheduleEntry = scheduleEntry(t0 + 5, { hasCheckpoint: true });
        const body = Buffer.from("sent");
        const attributes: Record<string, string> = { a: "b" };
        const blob = Buffer.from("blob");
        const typedAttributes: Record<string, TypedAttribute> = { bin: { dataType: "Binary", value: blob } };
        const checkpoint = Buffer.from("half");
        const config = { ...queueRecord("q", 1).config, maxInFlight: 5 };
        const expected = { moved: { ...moved }, sent: { ...sent } };
        const written = fx.store.commit([
          { kind: "reschedule", dataId, fromReadyAt: t0, entry: moved },
          putMessage(dataId, sent, { body, attributes, typedAttributes }),
          { kind: "putCheckpoint", dataId, id: sent.id, checkpoint },
          { kind: "putQueue", queue: { ...queueRecord("q", 1), config } },
        ]);
        Object.assign(moved, { readyAt: t0 + 9000, leased: false, epoch: 7, receiveCount: 7 });
        Object.assign(sent, { readyAt: t0 + 9000, hasCheckpoint: false, receiveCount: 3 });
        body.fill(0);
        attributes["a"] = "changed";
        blob.fill(0);
        typedAttributes["bin"] = { dataType: "String", value: "changed" };
        checkpoint.fill(0);
        Object.assign(config, { maxInFlight: 1 });
        await written;

        const { queues } = await fx.store.load();
        expect(loadedQueue(queues, "q").schedule.entries()).toEqual([expected.sent, expected.moved]);
        expect(loadedQueue(queues, "q").record.config.maxInFlight).toBe(5);
        const [read] = await fx.store.readMessages(dataId, [{ id: sent.id, hasCheckpoint: true }]);
        expect(plain(read)).toEqual({ body: "sent", attributes: { a: "b" } });
        expect(typedPlain(read!.typedAttributes)).toEqual({ bin: { dataType: "Binary", binary: "blob" } });
        expect(Buffer.from(read!.checkpoint!).toString()).toBe("half");
      });

      it.each([
        ["a sequence", { kind: "putSequence", next: 2 ** 32 }],
        ["a data id", putMessage(2 ** 32, scheduleEntry(t0))],
      ] as const)(
        "refuses a whole commit with %s beyond 32 bits, writing none of its ops, and still takes commits",
        async (_, bad) => {
          const dataId = await createQueue();
          const entry = scheduleEntry(t0);
          const refused = fx.store.commit([
            putMessage(dataId, entry),
            { kind: "putQueue", queue: queueRecord("other", 2) },
            bad,
          ]);
          await expect(refused).rejects.toThrow();
          await fx.store.commit([{ kind: "putQueue", queue: queueRecord("after", 3) }]);
          const state = await (await fx.reopen()).load();
          expect(state.queues.map((queue) => queue.record.name)).toEqual(["after", "q"]);
          expect(state.nextSequence).toBe(2);
          expect(loadedQueue(state.queues, "q").schedule.entries()).toEqual([]);
          expect(await readContents(fx.store, dataId, [entry.id])).toEqual([undefined]);
        },
      );
    });

    describeFifoContract(() => fx);

    describe("failures", () => {
      it("refuses a commit whose write fails with STORAGE_UNAVAILABLE in an operator's words, writing none of it", async (ctx) => {
        if (fx.writeFault === undefined) return ctx.skip();
        const dataId = await createQueue();
        const entry = scheduleEntry(t0);
        fx.writeFault.inject(diskFull());
        const failing = fx.store.commit([
          putMessage(dataId, entry),
          { kind: "putQueue", queue: queueRecord("other", 2) },
          { kind: "putSequence", next: 3 },
        ]);
        const behind = fx.store.commit([]);
        const failed = await failing.catch((error: unknown) => error);
        expect(isStorageUnavailable(failed)).toBe(true);
        expect((failed as HoldshelfError).message).toContain("ENOSPC: no space left on device");
        expect((failed as HoldshelfError).message).not.toContain("secret-path");
        // A barrier behind a failed write must not report it written.
        await expect(behind).rejects.toSatisfy(isStorageUnavailable);

        fx.writeFault.inject(undefined);
        const expectNothingWritten = async (store: Store): Promise<void> => {
          const state = await store.load();
          expect(state.queues.map((queue) => queue.record.name)).toEqual(["q"]);
          expect(state.nextSequence).toBe(2);
          expect(loadedQueue(state.queues, "q").schedule.entries()).toEqual([]);
          expect(await readContents(store, dataId, [entry.id])).toEqual([undefined]);
        };
        await expectNothingWritten(fx.store);
        await expectNothingWritten(await fx.reopen());
      });

      it("refuses a commit on a closed store with STORAGE_UNAVAILABLE, writing nothing", async () => {
        await fx.store.close();
        const refused = fx.store.commit([{ kind: "putSequence", next: 5 }]);
        await expect(refused).rejects.toThrow();
        await expect(refused).rejects.toSatisfy(isStorageUnavailable);
        expect((await (await fx.reopen()).load()).nextSequence).toBe(1);
      });

      it("rejects loads, reads and drops on a closed store", async () => {
        const dataId = await createQueue();
        await fx.store.close();
        await expect(fx.store.load()).rejects.toThrow();
        await expect(readContents(fx.store, dataId, [scheduleEntry(t0).id])).rejects.toThrow();
        await expect(fx.store.dropData(dataId)).rejects.toThrow();
      });
    });
  });
}
