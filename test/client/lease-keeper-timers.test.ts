import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { heartbeatLeaseChannel } from "../../src/client/heartbeat-lease-channel.js";
import { LeaseKeeper } from "../../src/client/lease-keeper.js";
import type { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { held, ScriptedStream } from "./scripted-stream.js";
import { settle } from "../support/wait.js";

// The keeper's timers on a fake clock: each test moves time itself, to the
// millisecond, instead of waiting for it.
describe("LeaseKeeper's timers", () => {
  const leaseMs = 30_000;
  const streams: ScriptedStream[] = [];
  const errors: unknown[] = [];
  let clock: FakeClock;
  let keeper: LeaseKeeper;
  let openFails = false;

  beforeEach(() => {
    clock = new FakeClock();
    openFails = false;
    // No jitter: renewals fall at exactly a third of the lease, backoffs at their floor (half the ceiling).
    vi.spyOn(Math, "random").mockReturnValue(0);
  });

  afterEach(async () => {
    const closing = keeper.close(1000);
    streams.at(-1)?.finish();
    clock.advance(1000);
    await closing;
    streams.splice(0);
    errors.splice(0);
    vi.restoreAllMocks();
  });

  function start(): ScriptedStream {
    keeper = new LeaseKeeper({
      queue: "jobs",
      openStream: () => {
        if (openFails) throw new Error("the channel is closed");
        const stream = new ScriptedStream();
        streams.push(stream);
        return heartbeatLeaseChannel(stream, "jobs");
      },
      visibilityTimeoutMs: undefined,
      leaseMs,
      renewFraction: 1 / 3,
      onError: (error) => errors.push(error),
      clock,
    });
    return streams[0]!;
  }

  /** Holds a lease from now on a stream whose opening request was answered, and answers its registration: held. */
  async function holdOn(stream: ScriptedStream, handle: string): Promise<LeaseLostError[]> {
    stream.push([]);
    await settle();
    const losses: LeaseLostError[] = [];
    keeper.hold(handle, clock.now(), (error) => losses.push(error));
    expect(stream.sent.at(-1)!.leases.map((l) => l.receiptHandle)).toEqual([handle]);
    stream.push([held(handle)]);
    await settle();
    return losses;
  }

  const renewal = (handle: string) => ({
    receiptHandle: handle,
    visibilityTimeoutMs: undefined,
    checkpoint: undefined,
  });

  it("renews a lease at a third of its length, counted from when the last renewal was sent", async () => {
    const stream = start();
    await holdOn(stream, "a");
    const sent = stream.sent.length;

    clock.advance(9_999);
    expect(stream.sent).toHaveLength(sent);
    clock.advance(1);
    expect(stream.sent).toHaveLength(sent + 1);
    expect(stream.sent.at(-1)!.leases).toEqual([renewal("a")]);

    // Answered half a second later: the next renewal still counts from the send.
    clock.advance(500);
    stream.push([held("a")]);
    await settle();
    clock.advance(9_499);
    expect(stream.sent).toHaveLength(sent + 1);
    clock.advance(1);
    expect(stream.sent).toHaveLength(sent + 2);
  });

  it("reopens a broken stream after a backoff that grows while streams keep failing, and resets once one answers", async () => {
    const first = start();
    await holdOn(first, "a");
    first.fail(new RpcError(14, "", "connection lost"));
    await settle();

    clock.advance(49);
    expect(streams).toHaveLength(1);
    clock.advance(1);
    expect(streams).toHaveLength(2);
    expect(streams[1]!.sent).toEqual([{ queue: "jobs", releaseOnDisconnect: true, leases: [renewal("a")] }]);

    streams[1]!.fail(new RpcError(14, "", "connection lost"));
    await settle();
    clock.advance(99);
    expect(streams).toHaveLength(2);
    clock.advance(1);
    expect(streams).toHaveLength(3);

    streams[2]!.push([held("a")]);
    await settle();
    streams[2]!.fail(new RpcError(14, "", "connection lost"));
    await settle();
    clock.advance(50);
    expect(streams).toHaveLength(4);
    expect(errors).toHaveLength(3);
  });

  it("breaks a stream whose renewal goes unanswered past the stall time; the lease, past its deadline, is lost", async () => {
    const stream = start();
    const losses = await holdOn(stream, "a");
    clock.advance(10_000);
    expect(stream.sent.at(-1)!.leases).toEqual([renewal("a")]);

    // The deadline passes with the renewal in flight: its answer could still keep the lease.
    clock.advance(20_000);
    expect(losses).toEqual([]);
    expect(stream.cancelled).toBe(false);
    // The stall time is the lease's length (at least 5 s), from the renewal's send.
    clock.advance(9_999);
    expect(stream.cancelled).toBe(false);
    clock.advance(1);
    expect(stream.cancelled).toBe(true);
    expect(errors.map((error) => (error as Error).message)).toEqual([`no Heartbeat answer within ${leaseMs} ms`]);
    expect(losses.map((error) => error.reason)).toEqual(["LEASE_EXPIRED"]);
  });

  it("presumes a lease lost at its deadline while no stream can be opened", async () => {
    const stream = start();
    const losses = await holdOn(stream, "a");
    openFails = true;
    stream.fail(new RpcError(14, "", "connection lost"));
    await settle();

    clock.advance(leaseMs - 1);
    expect(losses).toEqual([]);
    expect(errors.length).toBeGreaterThan(5);
    clock.advance(1);
    expect(losses.map((error) => error.reason)).toEqual(["LEASE_EXPIRED"]);
    expect(streams).toHaveLength(1);
  });
});
