import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LeaseKeeper } from "../../src/client/lease-keeper.js";
import type { LeaseLostError } from "../../src/client/lease-lost-error.js";
import { RpcError } from "../../src/client/rpc-error.js";
import {
  splitSubscribeResponse,
  subscribeLeaseChannel,
  type SubscribeLeaseChannel,
} from "../../src/client/subscribe-lease-channel.js";
import type { FlowControl, ReceivedMessage } from "../../src/client/types.js";
import { FakeClock } from "../support/fake-clock.js";
import { settle } from "../support/wait.js";
import { held, lost } from "./scripted-stream.js";
import { delivery, ScriptedSubscribe } from "./scripted-subscribe.js";

const leaseMs = 30_000;

// A LeaseKeeper on Subscribe streams the test plays the broker of, on a fake clock.
describe("LeaseKeeper on a Subscribe stream", () => {
  const streams: ScriptedSubscribe[] = [];
  const channels: SubscribeLeaseChannel[] = [];
  const errors: unknown[] = [];
  const delivered: ReceivedMessage[] = [];
  let flowControl: FlowControl;
  let clock: FakeClock;
  let keeper: LeaseKeeper;

  beforeEach(() => {
    clock = new FakeClock();
    flowControl = { maxOutstandingMessages: 4 };
    // Backoffs at their floor.
    vi.spyOn(Math, "random").mockReturnValue(0);
    keeper = new LeaseKeeper({
      queue: "jobs",
      openStream: () => {
        const stream = new ScriptedSubscribe();
        streams.push(stream);
        const channel = subscribeLeaseChannel(stream, {
          queue: "jobs",
          visibilityTimeoutMs: leaseMs,
          flowControl: () => flowControl,
          onDeliveries: (messages) => delivered.push(...messages),
        });
        channels.push(channel);
        return channel;
      },
      visibilityTimeoutMs: leaseMs,
      leaseMs,
      renewFraction: 1 / 3,
      onError: (error) => errors.push(error),
      clock,
    });
  });

  afterEach(async () => {
    const closing = keeper.close(1000);
    streams.at(-1)?.finish();
    await settle();
    clock.advance(1000);
    await closing;
    for (const list of [streams, channels, errors, delivered]) list.splice(0);
    vi.restoreAllMocks();
  });

  /** Holds a delivered lease, as the Consumer does with each delivery. */
  const hold = (handle: string) => {
    const losses: LeaseLostError[] = [];
    return { lease: keeper.hold(handle, clock.now(), (error) => losses.push(error), true), losses };
  };

  it("opens with the queue, the lease, release on disconnect and the flow control, and awaits no answer to that", async () => {
    const stream = streams[0]!;
    expect(stream.sent).toEqual([
      {
        queue: "jobs",
        visibilityTimeoutMs: leaseMs,
        releaseOnDisconnect: true,
        flowControl: { maxOutstandingMessages: 4 },
        acks: [],
        leases: [],
      },
    ]);
    // No answer comes to an opening without renewals: no stall timeout breaks the stream.
    clock.advance(5 * leaseMs);
    await settle();
    expect(stream.cancelled).toBe(false);
    expect(errors).toEqual([]);
  });

  it("passes deliveries on, and names a delivered lease first at its renewal", async () => {
    const stream = streams[0]!;
    stream.push({ messages: [delivery("a"), delivery("b")] });
    await settle();
    expect(delivered.map((m) => m.receiptHandle)).toEqual(["a", "b"]);
    hold("a");
    await settle();
    expect(stream.sent).toHaveLength(1);
    clock.advance(leaseMs / 3);
    expect(stream.sent.at(-1)!.leases!.map((l) => l.receiptHandle)).toEqual(["a"]);
    expect(stream.sent.at(-1)!.queue).toBeUndefined();
  });

  it("acks of the same tick go in one request; each settles by its own AckResult", async () => {
    const stream = streams[0]!;
    const a = hold("a");
    const b = hold("b");
    const c = hold("c");
    const acks = [a.lease.ack(), b.lease.ack(), c.lease.ack()].map((p) =>
      p.then(
        () => "deleted",
        (error: unknown) => error,
      ),
    );
    await settle();
    await settle();
    expect(stream.sent.slice(1)).toEqual([{ acks: ["a", "b", "c"], leases: [] }]);
    stream.push({
      acks: [
        { receiptHandle: "a", reason: "" },
        { receiptHandle: "b", reason: "LEASE_SUPERSEDED" },
        { receiptHandle: "c", reason: "" },
      ],
    });
    const [first, second, third] = await Promise.all(acks);
    expect(first).toBe("deleted");
    expect(third).toBe("deleted");
    expect(second).toBeInstanceOf(RpcError);
    expect(second).toMatchObject({ code: status.FAILED_PRECONDITION, reason: "LEASE_SUPERSEDED" });
    // Acked leases are no longer renewed.
    clock.advance(leaseMs);
    await settle();
    expect(stream.sent).toHaveLength(2);
  });

  it("turns a LEASE_EXPIRED notice into a lost lease, even in the answer to another request", async () => {
    const stream = streams[0]!;
    const a = hold("a");
    const b = hold("b");
    const checkpoint = b.lease.checkpoint(Buffer.from("1"));
    await settle();
    expect(stream.sent.at(-1)!.leases!.map((l) => l.receiptHandle)).toEqual(["b"]);
    // The answer to b's renewal and a notice about a, in one response.
    stream.push({ leases: [lost("a", "LEASE_EXPIRED"), held("b")] });
    await checkpoint;
    await settle();
    expect(a.losses.map((error) => error.reason)).toEqual(["LEASE_EXPIRED"]);
    expect(b.losses).toEqual([]);
  });

  it("splits answers from notices by reason, and matches answers to the request in flight", () => {
    const sent = { acks: ["x"], leases: [{ receiptHandle: "b" }] };
    const renewed = held("b");
    const expired = lost("a", "LEASE_EXPIRED");
    expect(
      splitSubscribeResponse(sent, { acks: [{ receiptHandle: "x", reason: "" }], leases: [renewed, expired] }),
    ).toEqual({ answer: { acks: [{ receiptHandle: "x", reason: "" }], leases: [renewed] }, notices: [expired] });
    // Notices alone answer nothing; nor does a response that names other handles.
    expect(splitSubscribeResponse(sent, { acks: [], leases: [lost("b", "LEASE_EXPIRED")] }).answer).toBeUndefined();
    expect(
      splitSubscribeResponse(sent, { acks: [{ receiptHandle: "y", reason: "" }], leases: [held("b")] }).answer,
    ).toBeUndefined();
    expect(splitSubscribeResponse(undefined, { acks: [], leases: [held("b")] }).answer).toBeUndefined();
  });

  it("reopens a stream ended with UNAVAILABLE, renewing in its opening request the leases still held and sending the acks unanswered", async () => {
    const stream = streams[0]!;
    const a = hold("a");
    hold("b");
    const settled = a.lease.ack();
    await settle();
    await settle();
    expect(stream.sent.at(-1)).toEqual({ acks: ["a"], leases: [] });
    stream.fail(new RpcError(status.UNAVAILABLE, "QUEUE_MOVING", "the queue is moving"));
    await settle();
    expect(errors).toHaveLength(1);
    flowControl = { maxOutstandingMessages: 0 };
    clock.advance(50);
    await settle();
    expect(streams).toHaveLength(2);
    expect(streams[1]!.sent).toEqual([
      {
        queue: "jobs",
        visibilityTimeoutMs: leaseMs,
        releaseOnDisconnect: true,
        flowControl: { maxOutstandingMessages: 0 },
        acks: ["a"],
        leases: [{ receiptHandle: "b", visibilityTimeoutMs: leaseMs, checkpoint: undefined }],
      },
    ]);
    streams[1]!.push({ acks: [{ receiptHandle: "a", reason: "" }], leases: [held("b")] });
    await settled;
  });

  it("starts its reconnect backoff over once a stream works, a response of deliveries alone included", async () => {
    const unavailable = () => new RpcError(status.UNAVAILABLE, "SHUTTING_DOWN", "the broker is shutting down");
    streams[0]!.fail(unavailable());
    await settle();
    // Backoffs at their floor: 50 ms, then 100 ms for a second failure in a row.
    clock.advance(50);
    expect(streams).toHaveLength(2);
    streams[1]!.fail(unavailable());
    await settle();
    clock.advance(99);
    expect(streams).toHaveLength(2);
    clock.advance(1);
    expect(streams).toHaveLength(3);
    streams[2]!.push({ messages: [delivery("a")] });
    await settle();
    streams[2]!.fail(unavailable());
    await settle();
    clock.advance(50);
    expect(streams).toHaveLength(4);
  });

  it("changes the flow control in a request of its own once the stream is open", () => {
    channels[0]!.setFlowControl({ maxOutstandingMessages: 0 });
    expect(streams[0]!.sent.at(-1)).toEqual({ flowControl: { maxOutstandingMessages: 0 } });
  });
});
