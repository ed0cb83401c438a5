// The stored values' layouts, byte for byte: what older holdshelf versions
// wrote must still read, standard queues' values must stay as they were, and
// a layout this code does not know must fail loudly rather than misread.
import { describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/broker/queue-config.js";
import { ScheduleColumns } from "../../src/store/schedule-columns.js";
import type { QueueRecord, ScheduleEntry } from "../../src/store/store.js";
import {
  decodeContent,
  decodeDeduplication,
  decodeQueueRecord,
  decodeScheduleValueInto,
  encodeContent,
  encodeDeduplication,
  encodeQueueRecord,
  encodeScheduleValue,
} from "../../src/store/value-codecs.js";
import { scheduleEntry, t0 } from "./store-fixtures.js";

/** Length-prefixed UTF-8, as the content layout writes its fields. */
function field(text: string): Buffer {
  const bytes = Buffer.from(text, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A schedule value as holdshelf wrote it before FIFO queues (version 1, 46 bytes), built field by field. */
function version1ScheduleValue(entry: ScheduleEntry): Buffer {
  const value = Buffer.alloc(46);
  value[0] = 1;
  value[1] = (entry.leased ? 1 : 0) | (entry.hasCheckpoint ? 2 : 0);
  value.writeUInt32BE(entry.receiveCount, 2);
  value.writeUInt32BE(entry.epoch, 6);
  value.writeUInt32BE(entry.size, 10);
  value.writeDoubleBE(entry.sendTime, 14);
  value.writeDoubleBE(entry.enqueuedAt, 22);
  value.writeDoubleBE(entry.firstReceiveAt, 30);
  value.writeDoubleBE(entry.leaseStart, 38);
  return value;
}

/** Decodes a schedule value into columns, with the key's fields (ready time, id) from `entry`. */
function decodeSchedule(value: Buffer, entry: ScheduleEntry): ScheduleColumns {
  const columns = new ScheduleColumns();
  const index = columns.append();
  columns.write(index, { ...entry, group: undefined, sequence: undefined });
  decodeScheduleValueInto(value, columns, index);
  return columns;
}

const leasedEntry = scheduleEntry(t0 + 30_000, {
  leased: true,
  hasCheckpoint: true,
  receiveCount: 3,
  epoch: 4,
  sendTime: t0 - 5000,
  enqueuedAt: t0 - 4000,
  firstReceiveAt: t0 - 3000,
  leaseStart: t0 + 1000,
  size: 70_000,
});

describe("schedule values", () => {
  it("reads a version 1 value, as written before FIFO queues, as a standard queue's entry", () => {
    const columns = decodeSchedule(version1ScheduleValue(leasedEntry), leasedEntry);
    expect(columns.entry(0)).toEqual(leasedEntry);
    expect(columns.hasGroups).toBe(false);
    expect(columns.groupOf(0)).toBeUndefined();
  });

  it("writes a standard queue's entry as version 1, byte for byte as before", () => {
    expect(encodeScheduleValue(leasedEntry).toString("hex")).toBe(version1ScheduleValue(leasedEntry).toString("hex"));
  });

  it("writes a FIFO queue's entry as version 1's fields, then the sequence number, the group's length and the group", () => {
    const entry = { ...leasedEntry, group: "orders-7", sequence: 2 ** 40 + 3 };
    const value = encodeScheduleValue(entry);
    const tail = Buffer.alloc(10);
    tail.writeDoubleBE(2 ** 40 + 3, 0);
    tail.writeUInt16BE(8, 8);
    const expected = Buffer.concat([version1ScheduleValue(leasedEntry), tail, Buffer.from("orders-7", "latin1")]);
    expected[0] = 2;
    expect(value.toString("hex")).toBe(expected.toString("hex"));
  });

  it("reads a version 2 value's group and sequence number back into the columns", () => {
    const entries = [
      { ...leasedEntry, group: "a", sequence: 1 },
      { ...scheduleEntry(t0), group: "", sequence: 2 ** 53 - 1 },
      { ...scheduleEntry(t0), group: "g".repeat(128), sequence: 0 },
      { ...scheduleEntry(t0), group: "a", sequence: 3 },
    ];
    const columns = new ScheduleColumns();
    for (const entry of entries) {
      const index = columns.append();
      columns.write(index, { ...entry, group: undefined, sequence: undefined });
      decodeScheduleValueInto(encodeScheduleValue(entry), columns, index);
    }
    expect(columns.entries()).toEqual(entries);
    expect(columns.hasGroups).toBe(true);
  });

  it.each([
    ["an unknown version", Buffer.concat([Buffer.of(3), version1ScheduleValue(leasedEntry).subarray(1)])],
    ["version 0", Buffer.alloc(46)],
    ["an empty value", Buffer.alloc(0)],
    ["version 1 with a byte too many", Buffer.concat([version1ScheduleValue(leasedEntry), Buffer.of(0)])],
    [
      "version 2 without its FIFO fields",
      Buffer.concat([Buffer.of(2), version1ScheduleValue(leasedEntry).subarray(1)]),
    ],
    [
      "version 2 with a group cut short",
      encodeScheduleValue({ ...leasedEntry, group: "abc", sequence: 1 }).subarray(0, 58),
    ],
  ])("refuses %s, naming the version", (_, value) => {
    expect(() => decodeSchedule(value, leasedEntry)).toThrow(/unknown schedule entry layout \(version/);
  });

  it("refuses to write a group longer than its length field holds", () => {
    expect(() => encodeScheduleValue({ ...leasedEntry, group: "g".repeat(0x10000), sequence: 1 })).toThrow(RangeError);
  });
});

describe("message contents", () => {
  // Version 3, as written before deduplication ids: one attribute, a dead-letter origin, a String and a Binary typed attribute, the body.
  const version3 = Buffer.concat([
    Buffer.of(3, 0, 0, 0, 1),
    field("k"),
    field("v"),
    Buffer.of(1),
    field("src"),
    field("why"),
    Buffer.of(0, 0, 0, 2),
    field("s"),
    field("String"),
    Buffer.of(0),
    field("text"),
    field("b"),
    field("Binary"),
    Buffer.of(1),
    field("\u0001\u0002"),
    Buffer.from("old body"),
  ]);

  it("reads version 3 content, as written before deduplication ids, with no deduplicationId key", () => {
    const read = decodeContent(version3);
    expect(Buffer.from(read.body).toString()).toBe("old body");
    expect(read.attributes).toEqual({ k: "v" });
    expect(read.deadLetter).toEqual({ sourceQueue: "src", reason: "why" });
    expect(read.typedAttributes["s"]).toEqual({ dataType: "String", value: "text" });
    expect(Buffer.from(read.typedAttributes["b"]!.value as Uint8Array).toString("hex")).toBe("0102");
    expect(Object.keys(read)).not.toContain("deduplicationId");
  });

  it("writes content without a deduplication id as version 3, byte for byte as before", () => {
    const content = {
      body: Buffer.from("old body"),
      attributes: { k: "v" },
      deadLetter: { sourceQueue: "src", reason: "why" },
      typedAttributes: { s: { dataType: "String", value: "text" }, b: { dataType: "Binary", value: Buffer.of(1, 2) } },
    };
    expect(encodeContent(content).toString("hex")).toBe(version3.toString("hex"));
  });

  it("writes a deduplication id as version 4: a flag and the id after the typed attributes, before the body", () => {
    const value = encodeContent({
      body: Buffer.from("body"),
      attributes: {},
      typedAttributes: {},
      deduplicationId: "d-1",
    });
    const expected = Buffer.concat([
      Buffer.of(4, 0, 0, 0, 0),
      Buffer.of(0),
      Buffer.of(0, 0, 0, 0),
      Buffer.of(1),
      field("d-1"),
      Buffer.from("body"),
    ]);
    expect(value.toString("hex")).toBe(expected.toString("hex"));
  });

  it("reads version 4 content with and without a deduplication id", () => {
    const withId = decodeContent(
      encodeContent({ body: Buffer.from("ü"), attributes: { a: "b" }, typedAttributes: {}, deduplicationId: "id ✓" }),
    );
    expect(withId.deduplicationId).toBe("id ✓");
    expect(Buffer.from(withId.body).toString()).toBe("ü");
    expect(withId.attributes).toEqual({ a: "b" });
    // Version 4 with the flag clear: what a writer that always writes version 4 would store.
    const flagClear = decodeContent(
      Buffer.concat([Buffer.of(4, 0, 0, 0, 0), Buffer.of(0), Buffer.of(0, 0, 0, 0), Buffer.of(0), Buffer.from("body")]),
    );
    expect(Buffer.from(flagClear.body).toString()).toBe("body");
    expect(Object.keys(flagClear)).not.toContain("deduplicationId");
  });

  it("writes a trace header as a typed entry no send can make (empty name, data type AWSTraceHeader), in version 3", () => {
    const value = encodeContent({
      body: Buffer.from("body"),
      attributes: {},
      typedAttributes: { s: { dataType: "String", value: "text" } },
      traceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793",
    });
    const expected = Buffer.concat([
      Buffer.of(3, 0, 0, 0, 0),
      Buffer.of(0),
      Buffer.of(0, 0, 0, 2),
      field("s"),
      field("String"),
      Buffer.of(0),
      field("text"),
      field(""),
      field("AWSTraceHeader"),
      Buffer.of(0),
      field("Root=1-5759e988-bd862e3fe1be46a994272793"),
      Buffer.from("body"),
    ]);
    expect(value.toString("hex")).toBe(expected.toString("hex"));
    const read = decodeContent(value);
    expect(read.traceHeader).toBe("Root=1-5759e988-bd862e3fe1be46a994272793");
    expect(read.typedAttributes).toEqual({ s: { dataType: "String", value: "text" } });
    expect(Buffer.from(read.body).toString()).toBe("body");
  });

  it("keeps a trace header beside a deduplication id, and no traceHeader key without one", () => {
    const read = decodeContent(
      encodeContent({
        body: Buffer.from("b"),
        attributes: {},
        typedAttributes: {},
        deduplicationId: "d",
        traceHeader: "Root=1-x",
      }),
    );
    expect([read.deduplicationId, read.traceHeader]).toEqual(["d", "Root=1-x"]);
    expect(Object.keys(decodeContent(version3))).not.toContain("traceHeader");
  });

  it.each([0, 5, 255])("refuses content version %i", (version) => {
    expect(() => decodeContent(Buffer.concat([Buffer.of(version, 0, 0, 0, 0), Buffer.from("body")]))).toThrow(
      /unknown message content layout/,
    );
  });
});

describe("deduplication records", () => {
  const record = {
    key: "group/dedup",
    messageId: "0123456789abcdef0123456789abcdef",
    sequence: 2 ** 40 + 1,
    expiresAt: t0 + 300_000,
  };

  it("writes version 1: the message id's 16 bytes, then the sequence number and the window's end as float64s", () => {
    const tail = Buffer.alloc(16);
    tail.writeDoubleBE(2 ** 40 + 1, 0);
    tail.writeDoubleBE(t0 + 300_000, 8);
    expect(encodeDeduplication(record).toString("hex")).toBe(`01${record.messageId}${tail.toString("hex")}`);
    expect(decodeDeduplication(record.key, encodeDeduplication(record))).toEqual(record);
  });

  it("refuses a message id that is not 32 lowercase hex digits", () => {
    expect(() => encodeDeduplication({ ...record, messageId: "0123456789ABCDEF0123456789ABCDEF" })).toThrow(
      /message id/,
    );
    expect(() => encodeDeduplication({ ...record, messageId: "0123" })).toThrow(/message id/);
  });

  it("refuses an unknown version or length", () => {
    const value = encodeDeduplication(record);
    expect(() => decodeDeduplication("k", Buffer.concat([Buffer.of(2), value.subarray(1)]))).toThrow(
      /unknown deduplication record layout/,
    );
    expect(() => decodeDeduplication("k", value.subarray(0, 32))).toThrow(/unknown deduplication record layout/);
  });
});

describe("queue records", () => {
  const standard: QueueRecord = {
    name: "q",
    queueId: 1,
    dataId: 2,
    config: defaultQueueConfig,
    createTime: t0,
    updateTime: t0 + 1,
  };

  it("writes a standard queue's record with no fifo key, as before FIFO queues", () => {
    const json = JSON.parse(encodeQueueRecord(standard).toString("utf8")) as { config: object };
    expect(Object.keys(json.config)).not.toContain("fifo");
    expect(Object.keys(decodeQueueRecord(encodeQueueRecord(standard)).config)).not.toContain("fifo");
  });

  it("writes a FIFO queue's settings, and reads them back", () => {
    const fifo = { contentBasedDeduplication: true, deduplicationScope: "messageGroup" } as const;
    const record = { ...standard, config: { ...standard.config, fifo } };
    const json = JSON.parse(encodeQueueRecord(record).toString("utf8")) as { config: { fifo: unknown } };
    expect(json.config.fifo).toEqual(fifo);
    expect(decodeQueueRecord(encodeQueueRecord(record))).toEqual(record);
  });
});
