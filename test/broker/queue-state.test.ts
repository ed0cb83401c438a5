import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newMessageId } from "../../src/broker/message-id.js";
import { QueueState } from "../../src/broker/queue-state.js";
import { ScheduleColumns } from "../../src/store/schedule-columns.js";
import type { QueueRecord, ScheduleEntry } from "../../src/store/store.js";

// The columnar index checked against the plainest model of the same rules: a
// list of entry objects in arrival order, each placed visible or hidden when
// it is added, rescheduled or advanced.

const record: QueueRecord = {
  name: "orders",
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
  },
};

interface ModelEntry extends ScheduleEntry {
  visible: boolean;
}

/** What the queue should hold: entries in arrival order, placed as QueueState places them. */
class Model {
  entries: ModelEntry[] = [];

  place(entry: ModelEntry, now: number): void {
    entry.visible = entry.readyAt <= now && !entry.leased;
  }

  nextVisible(): ModelEntry | undefined {
    return this.entries.filter((entry) => entry.visible).sort(readyOrder)[0];
  }

  nextReadyAt(): number | undefined {
    const hidden = this.entries.filter((entry) => !entry.visible).sort(readyOrder);
    return hidden[0]?.readyAt;
  }

  advance(now: number): string[] {
    const due = this.entries.filter((entry) => !entry.visible && entry.readyAt <= now).sort(readyOrder);
    const expired = due.filter((entry) => entry.leased).map((entry) => entry.id);
    for (const entry of due) {
      entry.leased = false;
      this.place(entry, now);
    }
    return expired;
  }
}

function readyOrder(a: ScheduleEntry, b: ScheduleEntry): number {
  return a.readyAt - b.readyAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function entry(id: string, readyAt: number, leased: boolean, enqueuedAt: number, epoch = 0): ScheduleEntry {
  return {
    id,
    readyAt,
    leased,
    receiveCount: epoch,
    epoch,
    sendTime: enqueuedAt - 7,
    enqueuedAt,
    firstReceiveAt: epoch > 0 ? enqueuedAt + 1 : 0,
    leaseStart: 0,
    size: 100 + epoch,
    hasCheckpoint: epoch % 2 === 1,
  };
}

type Operation =
  | { kind: "add"; delay: number; leased: boolean; sameMillisecond: boolean }
  | { kind: "remove"; pick: number }
  | { kind: "reschedule"; pick: number; delay: number; leased: boolean }
  | { kind: "take"; delay: number }
  | { kind: "advance"; by: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("add" as const),
      delay: fc.integer({ min: -5, max: 20 }),
      leased: fc.boolean(),
      sameMillisecond: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("reschedule" as const),
      pick: fc.nat(),
      delay: fc.integer({ min: -5, max: 20 }),
      leased: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("take" as const), delay: fc.integer({ min: 0, max: 20 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("advance" as const), by: fc.integer({ min: 0, max: 15 }) }) },
);

function checkSame(queue: QueueState, model: Model): void {
  const visible = model.entries.filter((each) => each.visible).length;
  const inFlight = model.entries.filter((each) => !each.visible && each.leased).length;
  expect(queue.size).toBe(model.entries.length);
  expect(queue.counts()).toEqual({
    visible,
    inFlight,
    delayed: model.entries.length - visible - inFlight,
    oldestSendTime: model.entries[0]?.sendTime,
  });
  expect(queue.nextVisible()?.id).toBe(model.nextVisible()?.id);
  expect(queue.nextReadyAt()).toBe(model.nextReadyAt());
  expect(queue.oldestMessage()?.id).toBe(model.entries[0]?.id);
}

describe("QueueState, the columnar index", () => {
  it("agrees with a model of objects over any sequence of adds, removes, reschedules, takes and advances", () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 300 }), (operations) => {
        const queue = new QueueState(record);
        const model = new Model();
        let now = 1_000;
        for (const op of operations) {
          switch (op.kind) {
            case "add": {
              if (!op.sameMillisecond) now++;
              const added = entry(newMessageId(now), now + op.delay, op.leased, now);
              queue.add(added, now);
              const modelled = { ...added, visible: false };
              model.place(modelled, now);
              model.entries.push(modelled);
              break;
            }
            case "remove": {
              if (model.entries.length === 0) break;
              const [removed] = model.entries.splice(op.pick % model.entries.length, 1);
              queue.remove(queue.get(removed!.id)!);
              expect(queue.get(removed!.id)).toBeUndefined();
              break;
            }
            case "reschedule": {
              if (model.entries.length === 0) break;
              const modelled = model.entries[op.pick % model.entries.length]!;
              const copy = queue.get(modelled.id)!;
              const { visible: _visible, ...stored } = modelled;
              expect(copy).toMatchObject(stored);
              copy.receiveCount++;
              copy.epoch++;
              modelled.receiveCount++;
              modelled.epoch++;
              const write = queue.reschedule(copy, now + op.delay, op.leased, now);
              modelled.readyAt = now + op.delay;
              modelled.leased = op.leased;
              model.place(modelled, now);
              expect(write).toMatchObject({
                kind: "reschedule",
                entry: { id: modelled.id, readyAt: now + op.delay, epoch: modelled.epoch },
              });
              break;
            }
            case "take": {
              const next = queue.nextVisible();
              const modelled = model.nextVisible();
              expect(next?.id).toBe(modelled?.id);
              if (next === undefined || modelled === undefined) break;
              queue.take(next);
              queue.reschedule(next, now + op.delay, true, now);
              modelled.readyAt = now + op.delay;
              modelled.leased = true;
              model.place(modelled, now);
              break;
            }
            case "advance": {
              now += op.by;
              expect(queue.advance(now).map((expired) => expired.id)).toEqual(model.advance(now));
              break;
            }
          }
          checkSame(queue, model);
        }
        // Every message still reads back field for field.
        for (const modelled of model.entries) {
          const { visible: _visible, ...stored } = modelled;
          expect(queue.get(modelled.id)).toMatchObject(stored);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("finds every id among a hundred thousand after removing most of them, ids of one millisecond included", () => {
    const queue = new QueueState(record);
    const ids: string[] = [];
    // One millisecond's ids count up in their low bits: the hash must not cluster them.
    for (let index = 0; index < 100_000; index++) {
      const id = newMessageId(index < 50_000 ? 5_000 : 5_000 + index);
      ids.push(id);
      queue.add(entry(id, 0, false, 5_000), 10);
    }
    const kept = new Set<string>();
    ids.forEach((id, index) => {
      if (index % 7 === 0) kept.add(id);
      else queue.remove(queue.get(id)!);
    });
    expect(queue.size).toBe(kept.size);
    expect(ids.filter((id) => (queue.get(id) !== undefined) !== kept.has(id))).toEqual([]);
    // Freed slots are reused by new messages, and old copies are not mistaken for them.
    const stale = queue.get(ids[0]!)!;
    queue.remove(stale);
    queue.add(entry(newMessageId(9_000), 0, false, 9_000), 10);
    expect(() => queue.remove(stale)).toThrow(/no longer in queue "orders"/);
  });

  it("finds every id through churn in a small table, where probe runs wrap around its end", () => {
    const queue = new QueueState(record);
    const live: string[] = [];
    const gone: string[] = [];
    let seed = 7;
    const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const wrong: string[] = [];
    for (let step = 0; step < 20_000; step++) {
      // Random ids, so that homes fall anywhere in the table, the last buckets included.
      if (live.length < 12 && random() < 0.6) {
        const id = [0, 1, 2, 3]
          .map(() =>
            Math.floor(random() * 2 ** 32)
              .toString(16)
              .padStart(8, "0"),
          )
          .join("");
        queue.add(entry(id, 0, false, 1), 1);
        live.push(id);
      } else if (live.length > 0) {
        const [id] = live.splice(Math.floor(random() * live.length), 1);
        queue.remove(queue.get(id!)!);
        gone.push(id!);
      }
      for (const id of live) if (queue.get(id) === undefined) wrong.push(`${step}: ${id} lost`);
      for (const id of gone.slice(-5)) if (queue.get(id) !== undefined) wrong.push(`${step}: ${id} still found`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it("loads a store's entries in ready order, keeping one entry per message (its latest delivery's) and arrival order", () => {
    const [first, second, third] = [newMessageId(100), newMessageId(100), newMessageId(200)];
    const queue = QueueState.loaded(
      record,
      ScheduleColumns.of([
        entry(third!, 5, false, 200),
        entry(second!, 6, true, 100, 1),
        entry(first!, 7, false, 100),
        // A failed write left the old delivery's entry of `second` behind, after the new one.
        entry(second!, 8, false, 100, 0),
        entry(first!, 9, true, 100, 2),
      ]),
      50,
    );
    expect(queue.size).toBe(3);
    expect(queue.get(first!)).toMatchObject({ epoch: 2, readyAt: 9, leased: true });
    expect(queue.get(second!)).toMatchObject({ epoch: 1, readyAt: 6, leased: true });
    expect(queue.counts()).toEqual({ visible: 1, inFlight: 2, delayed: 0, oldestSendTime: 93 });
    const arrival: string[] = [];
    for (let oldest = queue.oldestMessage(); oldest !== undefined; oldest = queue.oldestMessage()) {
      arrival.push(oldest.id);
      queue.remove(oldest);
    }
    expect(arrival).toEqual([first, second, third]);
  });

  it("keeps no message of before a clear, and refuses a copy of one", () => {
    const queue = new QueueState(record);
    const id = newMessageId(1);
    queue.add(entry(id, 0, false, 1), 1);
    const copy = queue.get(id)!;
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 0, delayed: 0, oldestSendTime: undefined });
    queue.add(entry(newMessageId(2), 0, false, 2), 2);
    expect(() => queue.reschedule(copy, 5, true, 2)).toThrow(/no longer in queue/);
  });

  it("gives back a drained queue's room, and a copy from before still never matches a new message", () => {
    const queue = new QueueState(record);
    const ids = Array.from({ length: 5_000 }, (_, index) => newMessageId(index));
    for (const id of ids) queue.add(entry(id, 0, false, 1), 1);
    const first = queue.get(ids[0]!)!;
    for (const id of ids) queue.remove(queue.get(id)!);
    // The new message lands in slot 0 of fresh columns, generation 0, as `first` did.
    const next = newMessageId(6_000);
    queue.add(entry(next, 0, false, 2), 2);
    expect(queue.get(next)).toMatchObject({ slot: first.slot });
    expect(() => queue.remove(first)).toThrow(/no longer in queue/);
    expect(queue.size).toBe(1);
    expect(queue.nextVisible()?.id).toBe(next);
  });

  it("puts back messages in arrival order, wherever they arrived", () => {
    const queue = new QueueState(record);
    const ids = [newMessageId(10), newMessageId(20), newMessageId(30)];
    ids.forEach((id, index) => {
      queue.add(entry(id, 0, false, 10 * (index + 1)), 40);
    });
    const middle = queue.get(ids[1]!)!;
    queue.remove(middle);
    queue.putBack([middle], 40);
    const arrival: string[] = [];
    for (let oldest = queue.oldestMessage(); oldest !== undefined; oldest = queue.oldestMessage()) {
      arrival.push(oldest.id);
      queue.remove(oldest);
    }
    expect(arrival).toEqual(ids);
  });

  it("chains a message whose commit overtook an earlier arrival where its arrival puts it, as a restart would", () => {
    const queue = new QueueState(record);
    const ids = Array.from({ length: 6 }, (_, index) => newMessageId(100 + index));
    // Arrivals 1, 3, 5, then 2 (behind two), 0 (behind all), 4 (behind one); ids[5] ties ids[4]'s arrival.
    const arrivals = [0, 1, 2, 3, 4, 4];
    for (const index of [1, 3, 5, 2, 0, 4]) queue.add(entry(ids[index]!, 0, false, arrivals[index]!), 10);
    const walked: string[] = [];
    queue.walkEnqueued(undefined, (message) => walked.push(message.id) > 0);
    expect(walked).toEqual(ids);
    expect(queue.oldestMessage()?.id).toBe(ids[0]);
  });

  it("walks from a cursor: right after its message, or where it would be once it is gone", () => {
    const queue = new QueueState(record);
    const ids = Array.from({ length: 5 }, (_, index) => newMessageId(200 + index));
    ids.forEach((id, index) => {
      queue.add(entry(id, 0, false, 10 * index), 50);
    });
    const walk = (cursor: { enqueuedAt: number; id: string }, limit = 10): string[] => {
      const walked: string[] = [];
      queue.walkEnqueued(cursor, (message) => walked.push(message.id) < limit);
      return walked;
    };
    expect(walk({ enqueuedAt: 10, id: ids[1]! })).toEqual(ids.slice(2));
    expect(walk({ enqueuedAt: 10, id: ids[1]! }, 2)).toEqual(ids.slice(2, 4));
    queue.remove(queue.get(ids[1]!)!);
    queue.remove(queue.get(ids[2]!)!);
    expect(walk({ enqueuedAt: 10, id: ids[1]! })).toEqual(ids.slice(3));
    // A cursor between two arrivals, and one past the newest.
    expect(walk({ enqueuedAt: 25, id: ids[0]! })).toEqual(ids.slice(3));
    expect(walk({ enqueuedAt: 40, id: ids[4]! })).toEqual([]);
  });

  it("walks back past at most 64 messages: an arrival stamped far in the past (a clock stepped back) is chained as the newest, at a bounded cost", () => {
    const queue = new QueueState(record);
    const ids = Array.from({ length: 200 }, (_, index) => newMessageId(300 + index));
    ids.slice(0, 199).forEach((id, index) => {
      queue.add(entry(id, 0, false, 1_000 + index), 50);
    });
    const walk = (): string[] => {
      const walked: string[] = [];
      queue.walkEnqueued(undefined, (message) => walked.push(message.id) > 0);
      return walked;
    };
    // Within the bound it is sorted in: one stamped 60 messages back goes after the 140th.
    const late = newMessageId(600);
    queue.add(entry(late, 0, false, 1_000 + 139), 50);
    expect(walk().indexOf(late)).toBe(140);
    // Stamped before every other: sorting it in would walk past 200 messages, so it is chained as the newest.
    queue.add(entry(ids[199]!, 0, false, 0), 50);
    expect(walk()).toEqual([...ids.slice(0, 140), late, ...ids.slice(140)]);
    expect(queue.oldestMessage()?.id).toBe(ids[0]);
  });

  it("finds where a gone cursor would be from the newest end when it is nearer that end", () => {
    const queue = new QueueState(record);
    const ids = Array.from({ length: 100 }, (_, index) => newMessageId(700 + index));
    ids.forEach((id, index) => {
      queue.add(entry(id, 0, false, 10 * index), 50);
    });
    const walk = (cursor: { enqueuedAt: number; id: string }): string[] => {
      const walked: string[] = [];
      queue.walkEnqueued(cursor, (message) => walked.push(message.id) > 0);
      return walked;
    };
    queue.remove(queue.get(ids[95]!)!);
    // Near the newest end (scanned backwards) and near the oldest (scanned forwards), the same answer as a full scan.
    expect(walk({ enqueuedAt: 950, id: ids[95]! })).toEqual(ids.slice(96));
    expect(walk({ enqueuedAt: 955, id: ids[95]! })).toEqual(ids.slice(96));
    queue.remove(queue.get(ids[3]!)!);
    expect(walk({ enqueuedAt: 30, id: ids[3]! })).toEqual(ids.slice(4).filter((id) => id !== ids[95]));
    expect(walk({ enqueuedAt: 5_000, id: ids[0]! })).toEqual([]);
  });
});
