import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Consumer, type ConsumerClient, type HandlerContext } from "../../src/client/consumer.js";
import type { HeartbeatStream } from "../../src/client/heartbeat-stream.js";
import { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { RpcError } from "../../src/client/rpc-error.js";
import type { DeleteOutcome, ReceivedMessage, ReceiveOptions } from "../../src/client/types.js";
import { FakeClock } from "../support/fake-clock.js";
import { held, lost, ScriptedStream } from "./scripted-stream.js";

/** A receive the test answers. */
interface PendingReceive {
  readonly options: ReceiveOptions;
  resolve(messages: ReceivedMessage[]): void;
  reject(error: unknown): void;
}

const message = (receiptHandle: string): ReceivedMessage => ({
  messageId: `id-${receiptHandle}`,
  receiptHandle,
  body: new Uint8Array(),
  attributes: {},
  typedAttributes: {},
  receiveCount: 1,
  sendTime: new Date(0),
  firstReceiveTime: new Date(0),
  leaseDeadline: new Date(0),
});

// The Consumer's timers on a fake clock, against a client the test plays:
// no broker and no real time, so each wait is checked to the millisecond.
describe("Consumer's timers", () => {
  const receives: PendingReceive[] = [];
  /** The deletes asked for, each answered by the test. */
  const deletes: { resolve(outcome?: DeleteOutcome): void; reject(error: unknown): void }[] = [];
  const streams: ScriptedStream[] = [];
  const errors: unknown[] = [];
  let clock: FakeClock;
  let consumer: Consumer | undefined;

  const client: ConsumerClient = {
    getQueue: () => Promise.reject(new Error("not used: the tests pass visibilityTimeoutMs")),
    receive: (_queue, options = {}) =>
      new Promise((resolve, reject) => {
        receives.push({ options, resolve, reject });
        options.signal?.addEventListener("abort", () => reject(new RpcError(1, "", "cancelled")), { once: true });
      }),
    delete: () =>
      new Promise<DeleteOutcome>((resolve, reject) =>
        deletes.push({ resolve: (outcome = "deleted") => resolve(outcome), reject }),
      ),
    changeVisibilityBatch: () => Promise.resolve([]),
    heartbeat: () => {
      const stream = new ScriptedStream();
      streams.push(stream);
      return stream as unknown as HeartbeatStream;
    },
  };

  /** Lets the consumer and its keeper take in what happened. */
  const settle = async () => {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  };

  beforeEach(() => {
    clock = new FakeClock();
    // No jitter: backoffs at their floor (half the ceiling).
    vi.spyOn(Math, "random").mockReturnValue(0);
  });

  afterEach(async () => {
    let stopped = consumer === undefined;
    const stopping = consumer?.stop().then(() => (stopped = true));
    streams.at(-1)?.finish();
    // stop() sets its timers as it gets to them: move time until it is done.
    for (let round = 0; round < 10 && !stopped; round++) {
      clock.advance(10_000);
      await settle();
    }
    await stopping;
    consumer = undefined;
    receives.splice(0);
    deletes.splice(0);
    streams.splice(0);
    errors.splice(0);
    vi.restoreAllMocks();
  });

  /** Starts a consumer whose handler runs until its signal aborts; resolves with the context of the one message it is given. */
  async function consumeOne(): Promise<HandlerContext> {
    let context!: HandlerContext;
    consumer = new Consumer(
      client,
      "jobs",
      (_message, handlerContext) =>
        new Promise<void>((resolve) => {
          context = handlerContext;
          handlerContext.signal.addEventListener("abort", () => resolve(), { once: true });
        }),
      // A minute's lease: its first renewal (at 20 s) comes after everything these tests do.
      { visibilityTimeoutMs: 60_000, stopGraceMs: 10_000, clock, onError: (error) => errors.push(error) },
    );
    await settle();
    const stream = streams[0]!;
    stream.push([]);
    receives[0]!.resolve([message("m1")]);
    await settle();
    expect(stream.sent.at(-1)!.leases.map((l) => l.receiptHandle)).toEqual(["m1"]);
    stream.push([held("m1")]);
    await settle();
    return context;
  }

  it("stop() waits out its grace period on the clock, then releases the message still being handled", async () => {
    const context = await consumeOne();
    const stream = streams[0]!;
    const sent = stream.sent.length;
    let stopped = false;
    const stopping = consumer!.stop().then(() => (stopped = true));
    await settle();

    clock.advance(9_999);
    await settle();
    expect(context.signal.aborted).toBe(false);
    expect(stream.sent).toHaveLength(sent);

    clock.advance(1);
    await settle();
    expect(context.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(context.signal.reason).toMatchObject({ reason: "RELEASED" });
    expect(stream.sent.at(-1)!.leases).toEqual([
      { receiptHandle: "m1", visibilityTimeoutMs: 0, checkpoint: undefined },
    ]);

    stream.push([lost("m1", "RELEASED")]);
    await settle();
    expect(stream.halfClosed).toBe(true);
    expect(stopped).toBe(false);
    stream.finish();
    await stopping;
    expect(stream.cancelled).toBe(false);
    expect(errors).toEqual([]);
  });

  it("stop() cuts the stream 5 s after the grace period when the server answers nothing", async () => {
    await consumeOne();
    const stream = streams[0]!;
    let stopped = false;
    const stopping = consumer!.stop().then(() => (stopped = true));
    await settle();
    clock.advance(10_000);
    await settle();

    clock.advance(4_999);
    await settle();
    expect(stream.cancelled).toBe(false);
    expect(stopped).toBe(false);
    clock.advance(1);
    await stopping;
    expect(stream.halfClosed).toBe(true);
    expect(stream.cancelled).toBe(true);
  });

  it("retries a failed receive after a backoff that grows with each failure", async () => {
    consumer = new Consumer(client, "jobs", () => {}, {
      visibilityTimeoutMs: 30_000,
      clock,
      onError: (error) => errors.push(error),
    });
    await settle();
    const unavailable = new RpcError(14, "", "connection refused");
    receives[0]!.reject(unavailable);
    await settle();

    clock.advance(49);
    await settle();
    expect(receives).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(receives).toHaveLength(2);

    receives[1]!.reject(unavailable);
    await settle();
    clock.advance(99);
    await settle();
    expect(receives).toHaveLength(2);
    clock.advance(1);
    await settle();
    expect(receives).toHaveLength(3);
    expect(errors).toEqual([unavailable, unavailable]);
  });

  /** Starts a consumer whose handler returns at once, and hands it one message. */
  async function handleOne(visibilityTimeoutMs = 60_000): Promise<ScriptedStream> {
    consumer = new Consumer(client, "jobs", () => {}, {
      visibilityTimeoutMs,
      clock,
      onError: (error) => errors.push(error),
    });
    await settle();
    const stream = streams[0]!;
    stream.push([]);
    receives[0]!.resolve([message("m1")]);
    await settle();
    stream.push([held("m1")]);
    await settle();
    return stream;
  }

  it("tries a delete again with backoff while no broker answers it, keeping the lease meanwhile", async () => {
    await handleOne();
    const unavailable = new RpcError(14, "QUEUE_MOVING", "queue is moving between brokers");
    deletes[0]!.reject(unavailable);
    await settle();
    clock.advance(49);
    await settle();
    expect(deletes).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(deletes).toHaveLength(2);
    deletes[1]!.reject(unavailable);
    await settle();
    clock.advance(100);
    await settle();
    expect(deletes).toHaveLength(3);
    expect(consumer!.active, "the slot stays taken until the message is settled").toBe(1);
    deletes[2]!.resolve();
    await settle();
    expect(consumer!.active).toBe(0);
    expect(errors).toEqual([unavailable, unavailable]);
  });

  it("does not try again a delete the broker refused", async () => {
    await handleOne();
    const superseded = new RpcError(9, "LEASE_SUPERSEDED", "received again since");
    deletes[0]!.reject(superseded);
    await settle();
    clock.advance(10_000);
    await settle();
    expect(deletes).toHaveLength(1);
    expect(errors).toEqual([superseded]);
    expect(consumer!.active).toBe(0);
  });

  it("reports a delete that came after the message was dead-lettered or received again as a lost lease", async () => {
    await handleOne();
    deletes[0]!.resolve("dead-lettered");
    await settle();
    expect(errors).toEqual([new LeaseLostError("m1", "DEAD_LETTERED")]);
    expect((errors[0] as LeaseLostError).reason).toBe("DEAD_LETTERED");
    expect(deletes, "not tried again").toHaveLength(1);
    expect(consumer!.active).toBe(0);
  });

  it("takes a delete that says no longer held (a purge, a restart since) as done", async () => {
    await handleOne();
    deletes[0]!.resolve("no-longer-held");
    await settle();
    expect(errors).toEqual([]);
    expect(consumer!.active).toBe(0);
  });

  it("keeps renewing the lease while it tries a delete again", async () => {
    // A 3 s lease, renewed at 1 s (no jitter): the retries outlast it.
    const stream = await handleOne(3000);
    const unavailable = new RpcError(14, "", "connection refused");
    const renewalsOfM1 = () =>
      stream.sent.filter((request) => request.leases.some((lease) => lease.receiptHandle === "m1")).length;
    const named = renewalsOfM1();
    let answered = stream.sent.length;
    for (let elapsed = 0; elapsed < 4000; elapsed += 50) {
      for (const pending of deletes.splice(0)) pending.reject(unavailable);
      // Each renewal is answered: the broker holds the lease for this consumer.
      for (; answered < stream.sent.length; answered++)
        stream.push(stream.sent[answered]!.leases.map((lease) => held(lease.receiptHandle)));
      clock.advance(50);
      await settle();
    }
    expect(renewalsOfM1() - named, "renewals while the delete failed").toBeGreaterThanOrEqual(3);
    // The next attempt, after its backoff, succeeds.
    for (let round = 0; round < 100 && deletes.length === 0; round++) {
      clock.advance(100);
      await settle();
    }
    deletes.splice(0).forEach((pending) => {
      pending.resolve();
    });
    await settle();
    expect(consumer!.active).toBe(0);
  });

  it("refuses a checkpoint over 64 KiB itself, sending nothing and keeping the lease", async () => {
    const context = await consumeOne();
    const stream = streams[0]!;
    const sent = stream.sent.length;
    await expect(context.checkpoint(new Uint8Array(64 * 1024 + 1))).rejects.toBeInstanceOf(RangeError);
    await settle();
    expect(stream.sent).toHaveLength(sent);
    expect(context.signal.aborted).toBe(false);
  });

  it("reports a release stop() could not get done", async () => {
    await consumeOne();
    const stream = streams[0]!;
    const stopping = consumer!.stop();
    await settle();
    clock.advance(10_000);
    await settle();
    expect(stream.sent.at(-1)!.leases).toEqual([
      { receiptHandle: "m1", visibilityTimeoutMs: 0, checkpoint: undefined },
    ]);
    stream.push([lost("m1", "INVALID_ARGUMENT")]);
    await settle();
    stream.finish();
    await stopping;
    expect(errors).toContainEqual(expect.objectContaining({ reason: "INVALID_ARGUMENT" }));
  });
});
