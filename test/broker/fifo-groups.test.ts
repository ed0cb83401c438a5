import { describe, expect, it } from "vitest";
import { newMessageId } from "../../src/broker/message-id.js";
import { MessageTable } from "../../src/broker/message-table.js";
import { QueueState } from "../../src/broker/queue-state.js";
import type { QueueRecord, ScheduleEntry } from "../../src/store/store.js";

// A FIFO queue's groups in memory: a group's number is freed when its last
// message leaves, so a queue that sees a new group per order (a million
// orders over its life) holds numbers only for the groups it holds now.

const record: QueueRecord = {
  name: "orders.fifo",
  queueId: 1,
  dataId: 1,
  createTime: 0,
  updateTime: 0,
  config: {
    visibilityTimeoutMs: 30_000,
    delayMs: 0,
    retentionMs: 345_600_000,
    maxMessageBytes: 262_144,
    receiveWaitTimeMs: 0,
    maxInFlight: 120_000,
    maxLeaseDurationMs: 43_200_000,
    redrivePolicy: undefined,
    retryPolicy: undefined,
    tags: {},
    fifo: { contentBasedDeduplication: false, deduplicationScope: "queue" },
  },
};

function entry(group: string, sequence: number, now: number): ScheduleEntry {
  return {
    id: newMessageId(now),
    readyAt: now,
    leased: false,
    receiveCount: 0,
    epoch: 0,
    sendTime: now,
    enqueuedAt: now,
    firstReceiveAt: 0,
    leaseStart: 0,
    size: 1,
    hasCheckpoint: false,
    group,
    sequence,
  };
}

describe("FIFO groups in memory", () => {
  it("frees a group's number when its last message leaves, while other groups stay", () => {
    const table = new MessageTable();
    const queue = new QueueState(record, table);
    queue.add(entry("kept", 1, 1), 1);
    for (let i = 0; i < 5000; i++) {
      const order = entry(`order-${i}`, i + 2, 2);
      queue.add(order, 2);
      queue.remove(queue.get(order.id)!);
    }
    expect(table.groups.span).toBeLessThanOrEqual(2);
    expect(queue.nextVisible()?.group).toBe("kept");
  });

  it("frees every number once the queue drains", () => {
    const table = new MessageTable();
    const queue = new QueueState(record, table);
    for (let i = 0; i < 100; i++) {
      queue.add(entry(`order-${i}`, i + 1, 1), 1);
      queue.remove(queue.nextVisible()!);
    }
    expect(table.groups.span).toBeLessThanOrEqual(1);
    expect(queue.size).toBe(0);
  });

  it("reads each entry as it came where a move across shards mixed the kinds in one queue", () => {
    const standardRecord: QueueRecord = { ...record, name: "plain", config: { ...record.config, fifo: undefined } };
    const plain = new QueueState(standardRecord, new MessageTable());
    const fifoEntry = entry("g", 7, 1);
    const { group: _group, sequence: _sequence, ...standardEntry } = entry("unused", 0, 1);
    plain.add(fifoEntry, 1);
    plain.add(standardEntry, 1);
    expect(plain.get(fifoEntry.id)).toMatchObject({ group: "g", sequence: 7 });
    expect(plain.get(standardEntry.id)).toMatchObject({ group: undefined, sequence: undefined });

    const fifo = new QueueState(record, new MessageTable());
    fifo.add(standardEntry, 1);
    expect(fifo.get(standardEntry.id)?.group).toBe("");
    expect(fifo.nextVisible()?.id).toBe(standardEntry.id);
  });
});
