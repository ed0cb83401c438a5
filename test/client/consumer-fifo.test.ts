// The Consumer on a FIFO queue, against a real broker: a Receive may lease
// several messages of one group at once (in order), so a consumer whose
// concurrency is above 1 must still handle each group's messages one at a
// time, in send order, and must not handle a later one after an earlier one
// failed. Handlers yield to the event loop rather than sleep: order, not
// time, is what these tests are about.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ReceivedMessage } from "../../src/client/types.js";
import { settle } from "../support/wait.js";
import { deferred, startConsumerHarness, type ConsumerHarness, consumerModes } from "./consumer-harness.js";

const queue = "orders.fifo";

describe.each(consumerModes)("Consumer on a FIFO queue ($mode)", ({ mode }) => {
  let c: ConsumerHarness;
  beforeEach(async () => {
    c = await startConsumerHarness(mode);
    await c.admin.createQueue(queue, { fifo: true, visibilityTimeoutMs: 30_000 });
  });
  afterEach(async () => {
    await c.stop();
  });

  /** Sends the bodies in one batch, each to the group its first character names ("a3" to group a). */
  async function send(bodies: string[]): Promise<void> {
    await c.admin.sendBatch(
      queue,
      bodies.map((body) => ({ body, messageGroupId: body[0]!, deduplicationId: body })),
    );
  }

  const bodyOf = (message: ReceivedMessage): string => Buffer.from(message.body).toString();

  it("handles each group's messages one at a time and in send order, whatever its concurrency", async () => {
    const groups = ["a", "b", "c"];
    const perGroup = 8;
    const bodies = Array.from({ length: perGroup }, (_, index) => groups.map((group) => `${group}${index}`)).flat();
    await send(bodies);
    const handled = new Map<string, ReceivedMessage[]>(groups.map((group) => [group, []]));
    const running = new Map<string, number>();
    const overlaps: string[] = [];
    let maxRunning = 0;
    const finished = deferred();
    c.consume(
      queue,
      async (message) => {
        const group = message.messageGroupId!;
        const now = (running.get(group) ?? 0) + 1;
        running.set(group, now);
        if (now > 1) overlaps.push(bodyOf(message));
        maxRunning = Math.max(
          maxRunning,
          [...running.values()].reduce((sum, n) => sum + n, 0),
        );
        // A few turns of the event loop: long enough for a handler started beside this one to show.
        for (let turn = 0; turn < 3; turn++) await settle();
        running.set(group, running.get(group)! - 1);
        handled.get(group)!.push(message);
        if ([...handled.values()].every((list) => list.length === perGroup)) finished.resolve();
      },
      { concurrency: 10 },
    );
    await finished.promise;
    expect(overlaps).toEqual([]);
    for (const group of groups) {
      const messages = handled.get(group)!;
      expect(messages.map(bodyOf)).toEqual(Array.from({ length: perGroup }, (_, index) => `${group}${index}`));
      const numbers = messages.map((message) => message.sequenceNumber!);
      expect([...numbers].sort()).toEqual(numbers);
    }
    // Groups still ran side by side: concurrency serves different groups.
    expect(maxRunning).toBeGreaterThan(1);
    await vi.waitFor(async () => expect(await c.stats(queue)).toMatchObject({ visible: 0, inFlight: 0 }));
    expect(c.errors).toEqual([]);
  });

  it("gives back the rest of a group's messages when one fails, and handles them after its retry", async () => {
    await send(["a0", "a1", "a2", "a3", "b0"]);
    const calls: string[] = [];
    const failure = new Error("a1 fails once");
    const finished = deferred();
    let succeeded = 0;
    c.consume(
      queue,
      async (message) => {
        const body = bodyOf(message);
        calls.push(`${body}#${message.receiveCount}`);
        await settle();
        if (body === "a1" && message.receiveCount === 1) throw failure;
        if (++succeeded === 5) finished.resolve();
      },
      { concurrency: 10 },
    );
    await finished.promise;
    // a2 and a3 were leased with a0 and a1, yet never handled before a1 was: they went back, and came again behind it.
    const groupA = calls.filter((call) => call.startsWith("a"));
    expect(groupA).toEqual(["a0#1", "a1#1", "a1#2", "a2#2", "a3#2"]);
    expect(calls).toContain("b0#1");
    await vi.waitFor(async () => expect(await c.stats(queue)).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 }));
    expect(c.errors).toEqual([failure]);
  });

  it("starts no waiting message of a group once stop() began: they go back to the queue unhandled", async () => {
    await send(["a0", "a1", "a2"]);
    const calls: string[] = [];
    const started = deferred();
    const release = deferred();
    const consumer = c.consume(
      queue,
      async (message) => {
        calls.push(bodyOf(message));
        started.resolve();
        await release.promise;
      },
      { concurrency: 10, stopGraceMs: 10_000 },
    );
    await started.promise;
    const stopped = consumer.stop();
    // a0 finishes within the grace period; a1 and a2, leased with it, must not start now.
    release.resolve();
    await stopped;
    expect(calls).toEqual(["a0"]);
    expect(await c.stats(queue)).toMatchObject({ visible: 2, inFlight: 0 });
    const [a1] = await c.admin.receive(queue);
    expect([bodyOf(a1!), a1!.receiveCount]).toEqual(["a1", 2]);
    expect(c.errors).toEqual([]);
  });
});
