import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../../src/broker/types.js";
import { body, openBrokerHarness, sendBatch, text, type BrokerHarness } from "./broker-harness.js";

// FIFO delivery checked against its definition, over random runs of sends,
// receives, deletes, releases, clock steps and restarts on the fake clock:
// at every delivery of a message, every earlier message of its group that is
// still stored comes before it in the same response, and no other message of
// its group is leased; at the end, everything sent is delivered and deleted.

type Command =
  | { readonly kind: "send"; readonly group: number; readonly count: number }
  | { readonly kind: "receive"; readonly max: number; readonly visibilityMs: number }
  | { readonly kind: "delete"; readonly pick: number }
  | { readonly kind: "release"; readonly pick: number }
  | { readonly kind: "advance"; readonly ms: number }
  | { readonly kind: "restart" };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("send" as const),
      group: fc.nat(4),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("receive" as const),
      max: fc.integer({ min: 1, max: 6 }),
      visibilityMs: fc.constantFrom(0, 1000, 5000),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.constantFrom(500, 1000, 3000) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
);

/** What the test knows of a stored message: its group and place in it, and its latest delivery. */
interface Known {
  readonly group: string;
  readonly index: number;
  handle: string | undefined;
  leaseDeadline: number;
}

class FifoModel {
  /** Stored messages by id, and each group's next index. */
  readonly stored = new Map<string, Known>();
  private readonly nextIndex = new Map<string, number>();
  readonly everSent: string[] = [];

  sent(id: string, group: string): void {
    const index = this.nextIndex.get(group) ?? 0;
    this.nextIndex.set(group, index + 1);
    this.stored.set(id, { group, index, handle: undefined, leaseDeadline: 0 });
    this.everSent.push(id);
  }

  /** Checks a response against the rules, then records its leases. */
  delivered(deliveries: readonly Delivery[], now: number): void {
    const inResponse = new Set(deliveries.map((delivery) => delivery.messageId));
    deliveries.forEach((delivery, position) => {
      const known = this.stored.get(delivery.messageId);
      expect(known, `delivered ${delivery.messageId}, which is not stored`).toBeDefined();
      expect(delivery.fifo?.messageGroupId).toBe(known!.group);
      for (const [id, other] of this.stored) {
        if (id === delivery.messageId || other.group !== known!.group) continue;
        if (other.index < known!.index) {
          // An earlier message still stored must come first, in this response.
          const earlierAt = deliveries.findIndex((d) => d.messageId === id);
          expect(earlierAt, `${text(delivery.body)} passed an earlier message of its group`).toBeGreaterThanOrEqual(0);
          expect(earlierAt).toBeLessThan(position);
        }
        if (!inResponse.has(id))
          expect(other.leaseDeadline > now, `${text(delivery.body)} delivered while its group is leased`).toBe(false);
      }
    });
    for (const delivery of deliveries) {
      const known = this.stored.get(delivery.messageId)!;
      known.handle = delivery.receiptHandle;
      known.leaseDeadline = delivery.leaseDeadline;
    }
  }

  /** The stored message with a delivery, chosen by `pick`. */
  pickDelivered(pick: number): [string, Known] | undefined {
    const delivered = [...this.stored].filter(([, known]) => known.handle !== undefined);
    return delivered.length === 0 ? undefined : delivered[pick % delivered.length];
  }
}

async function run(h: BrokerHarness, model: FifoModel, commands: readonly Command[]): Promise<void> {
  let sent = 0;
  for (const step of commands) {
    switch (step.kind) {
      case "send": {
        const group = `g${step.group}`;
        const entries = Array.from({ length: step.count }, () => {
          sent++;
          return { body: body(`${group}#${sent}`), messageGroupId: group, deduplicationId: `d${sent}` };
        });
        const ids = await sendBatch(h.broker, "f", entries);
        for (const id of ids) model.sent(id, group);
        break;
      }
      case "receive":
        model.delivered(
          await h.broker.receive("f", { maxMessages: step.max, visibilityTimeoutMs: step.visibilityMs }),
          h.clock.now(),
        );
        break;
      case "delete": {
        const picked = model.pickDelivered(step.pick);
        if (picked === undefined) break;
        const [id, known] = picked;
        // A handle superseded by a later delivery deletes nothing (LEASE_SUPERSEDED); the latest one is kept.
        await h.broker.delete("f", known.handle!);
        model.stored.delete(id);
        break;
      }
      case "release": {
        const picked = model.pickDelivered(step.pick);
        if (picked === undefined || picked[1].leaseDeadline <= h.clock.now()) break;
        await h.broker.changeVisibility("f", picked[1].handle!, 0);
        picked[1].leaseDeadline = h.clock.now();
        break;
      }
      case "advance":
        h.clock.advance(step.ms);
        await h.broker.runMaintenance();
        break;
      case "restart":
        await h.restart();
        break;
    }
  }
  // Drain: every lease runs out, and everything stored is delivered in order and deleted.
  for (let round = 0; model.stored.size > 0; round++) {
    expect(round, "drained in time").toBeLessThan(1000);
    h.clock.advance(5000);
    const deliveries = await h.broker.receive("f", { maxMessages: 10, visibilityTimeoutMs: 1000 });
    model.delivered(deliveries, h.clock.now());
    for (const delivery of deliveries) {
      await h.broker.delete("f", delivery.receiptHandle);
      model.stored.delete(delivery.messageId);
    }
  }
  expect(h.broker.getQueue("f").counts).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
}

describe("FIFO delivery against its definition", () => {
  it("never passes an earlier message of a group, never delivers beside a lease of its group, and loses nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), fc.boolean(), async (commands, backoff) => {
        const h = await openBrokerHarness();
        try {
          // Half the runs space retries out: a failed first message then holds its group through its backoff.
          const retryPolicy = backoff ? { minBackoffMs: 1000, maxBackoffMs: 3000 } : undefined;
          await h.broker.createQueue("f", { fifo: true, visibilityTimeoutMs: 1000, retryPolicy });
          await run(h, new FifoModel(), commands);
          expect(h.backgroundErrors).toEqual([]);
        } finally {
          await h.dispose();
        }
      }),
      { numRuns: 300, seed: 19 },
    );
  });
});
