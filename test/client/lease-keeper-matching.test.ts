import { afterEach, describe, expect, it, vi } from "vitest";
import { heartbeatLeaseChannel } from "../../src/client/heartbeat-lease-channel.js";
import { LeaseKeeper } from "../../src/client/lease-keeper.js";
import { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { RpcError } from "../../src/client/rpc-error.js";
import { held, lost, ScriptedStream } from "./scripted-stream.js";
import { settle } from "../support/wait.js";

// Leases of a minute: no renewal or expiry timer fires during these tests, so
// every request is one the test caused with a checkpoint or a release.
const leaseMs = 60_000;

describe("LeaseKeeper's matching of Heartbeat responses", () => {
  const streams: ScriptedStream[] = [];
  const errors: unknown[] = [];
  let keeper: LeaseKeeper;

  function start(): ScriptedStream {
    keeper = new LeaseKeeper({
      queue: "jobs",
      openStream: () => {
        const stream = new ScriptedStream();
        streams.push(stream);
        return heartbeatLeaseChannel(stream, "jobs");
      },
      visibilityTimeoutMs: undefined,
      leaseMs,
      renewFraction: 1 / 3,
      onError: (error) => errors.push(error),
    });
    return streams[0]!;
  }

  function hold(handle: string): { lease: ReturnType<LeaseKeeper["hold"]>; losses: LeaseLostError[] } {
    const losses: LeaseLostError[] = [];
    return { lease: keeper.hold(handle, performance.now(), (error) => losses.push(error)), losses };
  }

  /** Expects the renewal that names freshly held leases on the stream, and answers it: held. */
  async function registered(stream: ScriptedStream, ...handles: string[]): Promise<void> {
    await settle();
    expect(stream.sent.at(-1)!.leases.map((l) => l.receiptHandle)).toEqual(handles);
    stream.push(handles.map((handle) => held(handle)));
    await settle();
  }

  afterEach(async () => {
    const closing = keeper.close(1000);
    streams.at(-1)?.finish();
    await closing;
    streams.splice(0);
    errors.splice(0);
  });

  it("opens with an empty request that asks for release on disconnect, and sends one request at a time", async () => {
    const stream = start();
    expect(stream.sent).toEqual([{ queue: "jobs", releaseOnDisconnect: true, leases: [] }]);
    const a = hold("a");
    const saved = a.lease.checkpoint(Buffer.from("1"));
    await settle();
    expect(stream.sent).toHaveLength(1);
    stream.push([]);
    await settle();
    expect(stream.sent[1]!.leases).toEqual([
      { receiptHandle: "a", visibilityTimeoutMs: undefined, checkpoint: Buffer.from("1") },
    ]);
    stream.push([held("a")]);
    await saved;
  });

  it("a notice about another lease, while a request is in flight, loses that lease only", async () => {
    const stream = start();
    const a = hold("a");
    const b = hold("b");
    stream.push([]);
    await registered(stream, "a", "b");
    const saved = a.lease.checkpoint(Buffer.from("x"));
    await settle();
    stream.push([lost("b", "LEASE_EXPIRED")]);
    await settle();
    expect(b.losses.map((e) => e.reason)).toEqual(["LEASE_EXPIRED"]);
    expect(a.losses).toEqual([]);
    stream.push([held("a")]);
    await expect(saved).resolves.toBeUndefined();
  });

  it("a notice about a lease in flight waits for the answer, which decides", async () => {
    const stream = start();
    const a = hold("a");
    const b = hold("b");
    const savedA = a.lease.checkpoint(Buffer.from("a"));
    const savedB = b.lease.checkpoint(Buffer.from("b"));
    stream.push([]);
    await settle();
    expect(stream.sent[1]!.leases.map((l) => l.receiptHandle)).toEqual(["a", "b"]);
    // Expired just before the server read the request, which then took it back.
    stream.push([lost("a", "LEASE_EXPIRED")]);
    stream.push([held("a"), held("b")]);
    await Promise.all([savedA, savedB]);
    expect(a.losses).toEqual([]);
  });

  it("a notice naming exactly the handles in flight is taken as the answer; the late true answer changes nothing", async () => {
    const stream = start();
    const a = hold("a");
    stream.push([]);
    await registered(stream, "a");
    const saved = a.lease.checkpoint(Buffer.from("x"));
    await settle();
    stream.push([lost("a", "LEASE_EXPIRED")]);
    await expect(saved).rejects.toMatchObject({ reason: "LEASE_EXPIRED" });
    expect(a.losses.map((e) => e.reason)).toEqual(["LEASE_EXPIRED"]);

    const b = hold("b");
    const savedB = b.lease.checkpoint(Buffer.from("y"));
    await settle();
    // b's registration is in flight; its checkpoint waits for the next request.
    expect(stream.sent.at(-1)!.leases.map((l) => l.receiptHandle)).toEqual(["b"]);
    stream.push([held("a")]); // the true, late answer about a
    await settle();
    stream.push([held("b")]);
    await settle();
    expect(stream.sent.at(-1)!.leases).toEqual([
      { receiptHandle: "b", visibilityTimeoutMs: undefined, checkpoint: Buffer.from("y") },
    ]);
    stream.push([held("b")]);
    await expect(savedB).resolves.toBeUndefined();
    expect(b.losses).toEqual([]);
  });

  it("sends a release only after the renewal in flight is answered, so that no renewal can follow it", async () => {
    const stream = start();
    const a = hold("a");
    stream.push([]);
    await registered(stream, "a");
    const saved = a.lease.checkpoint(Buffer.from("x"));
    await settle();
    const released = a.lease.release(0);
    await settle();
    expect(stream.sent).toHaveLength(3);
    stream.push([held("a")]);
    await saved;
    await settle();
    expect(stream.sent[3]!.leases).toEqual([{ receiptHandle: "a", visibilityTimeoutMs: 0, checkpoint: undefined }]);
    stream.push([lost("a", "RELEASED")]);
    await expect(released).resolves.toBeUndefined();
    expect(a.losses).toEqual([]);
  });

  it("a refused renewal loses the lease for its holder, yet keeps its handle for the failed delivery that follows", async () => {
    const stream = start();
    const a = hold("a");
    stream.push([]);
    await settle();
    // The renewal that names the lease is refused: the lease keeps its deadline, unrenewed.
    stream.push([lost("a", "LEASE_LIMIT_EXCEEDED")]);
    await settle();
    expect(a.losses.map((error) => error.reason)).toEqual(["LEASE_LIMIT_EXCEEDED"]);
    await expect(a.lease.checkpoint(Buffer.from("late"))).rejects.toBeInstanceOf(LeaseLostError);
    const failed = a.lease.fail(undefined);
    await settle();
    expect(stream.sent.at(-1)!.leases).toEqual([
      { receiptHandle: "a", visibilityTimeoutMs: undefined, checkpoint: undefined, failed: true },
    ]);
    stream.push([lost("a", "RELEASED")]);
    await expect(failed).resolves.toBeUndefined();
    expect(a.losses, "told once").toHaveLength(1);
  });

  it("a release the broker refuses rejects with its reason; one whose lease was already gone resolves", async () => {
    const stream = start();
    const a = hold("a");
    const b = hold("b");
    stream.push([]);
    await registered(stream, "a", "b");
    const refused = a.lease.fail(13 * 3600_000);
    await settle();
    expect(stream.sent.at(-1)!.leases).toEqual([
      { receiptHandle: "a", visibilityTimeoutMs: 13 * 3600_000, checkpoint: undefined, failed: true },
    ]);
    stream.push([lost("a", "INVALID_ARGUMENT")]);
    await expect(refused).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    const gone = b.lease.release(0);
    await settle();
    stream.push([lost("b", "LEASE_SUPERSEDED")]);
    await expect(gone).resolves.toBeUndefined();
  });

  it("after a refused ending, an ending asked for since is still sent, since the handle still works", async () => {
    const stream = start();
    const a = hold("a");
    stream.push([]);
    await registered(stream, "a");
    const refused = a.lease.fail(13 * 3600_000);
    await settle();
    const released = a.lease.release(0);
    stream.push([lost("a", "INVALID_ARGUMENT")]);
    await expect(refused).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    await settle();
    expect(stream.sent.at(-1)!.leases).toEqual([{ receiptHandle: "a", visibilityTimeoutMs: 0, checkpoint: undefined }]);
    stream.push([lost("a", "RELEASED")]);
    await expect(released).resolves.toBeUndefined();
  });

  it("a refused renewal fails a checkpoint queued behind it, which is never sent", async () => {
    const stream = start();
    const a = hold("a");
    stream.push([]);
    await registered(stream, "a");
    const first = a.lease.checkpoint(Buffer.from("1"));
    await settle();
    const second = a.lease.checkpoint(Buffer.from("2"));
    const sent = stream.sent.length;
    stream.push([lost("a", "LEASE_LIMIT_EXCEEDED")]);
    await expect(first).rejects.toMatchObject({ reason: "LEASE_LIMIT_EXCEEDED" });
    await expect(second).rejects.toMatchObject({ reason: "LEASE_LIMIT_EXCEEDED" });
    await settle();
    expect(stream.sent, "nothing more sent").toHaveLength(sent);
  });

  it("close() fails the releases it could not send or get answered, rather than passing them as done", async () => {
    const stream = start();
    const a = hold("a");
    const b = hold("b");
    stream.push([]);
    await registered(stream, "a", "b");
    const unanswered = a.lease.release(0);
    await settle();
    const unsent = b.lease.release(0);
    await settle();
    expect(
      stream.sent.at(-1)!.leases.map((l) => l.receiptHandle),
      "one request at a time",
    ).toEqual(["a"]);
    await keeper.close(50);
    await expect(unanswered).rejects.toThrow("before the broker answered");
    await expect(unsent).rejects.toThrow("before this release was sent");
  });

  it("reopens a broken stream, renewing every lease held and sending again what was unanswered", async () => {
    const first = start();
    const a = hold("a");
    const b = hold("b");
    first.push([]);
    await settle();
    const saved = a.lease.checkpoint(Buffer.from("x"));
    await settle();
    const broken = new RpcError(14, "", "connection lost");
    first.fail(broken);
    await vi.waitFor(() => expect(streams).toHaveLength(2));
    expect(errors).toEqual([broken]);
    const second = streams[1]!;
    expect(second.sent).toEqual([
      {
        queue: "jobs",
        releaseOnDisconnect: true,
        leases: [
          { receiptHandle: "a", visibilityTimeoutMs: undefined, checkpoint: Buffer.from("x") },
          { receiptHandle: "b", visibilityTimeoutMs: undefined, checkpoint: undefined },
        ],
      },
    ]);
    second.push([held("a"), lost("b", "LEASE_SUPERSEDED")]);
    await expect(saved).resolves.toBeUndefined();
    expect(b.losses.map((e) => e.reason)).toEqual(["LEASE_SUPERSEDED"]);
  });

  it("close() waits for pending releases, then half-closes and forgets the rest", async () => {
    const stream = start();
    const a = hold("a");
    hold("b");
    stream.push([]);
    await registered(stream, "a", "b");
    const released = a.lease.release(2000);
    const closing = keeper.close(5000);
    await settle();
    expect(stream.halfClosed).toBe(false);
    stream.push([held("a")]);
    await released;
    await settle();
    expect(stream.halfClosed).toBe(true);
    stream.finish();
    await closing;
    expect(stream.cancelled).toBe(false);
    expect(errors).toEqual([]);
  });
});
