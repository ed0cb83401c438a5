// Heartbeat renewals whose writes linger to share an fsync
// (src/broker/renewal-linger.ts): the policy, and what a real broker on a
// real store does with it. Lingers are long here (seconds) so that the
// margins hold on a loaded machine; the default is 20 ms.
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";
import type { HeartbeatResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import { renewalLingerMs, type RenewalLinger } from "../../src/broker/renewal-linger.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openHeartbeatStream, type HeartbeatStream } from "../support/heartbeat-stream.js";

describe("renewalLingerMs", () => {
  const policy: RenewalLinger = { lingerMs: 20, minStreams: 8 };

  it("lingers only with enough streams open to share a write, and never with requests queued behind", () => {
    expect(renewalLingerMs(policy, 8, false)).toBe(20);
    expect(renewalLingerMs(policy, 1000, false)).toBe(20);
    expect(renewalLingerMs(policy, 7, false)).toBe(0);
    expect(renewalLingerMs(policy, 1000, true)).toBe(0);
  });
});

describe("Heartbeat renewals on a broker that lingers", () => {
  let h: GrpcHarness;
  const streams: HeartbeatStream[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await h.stop();
  });

  async function start(renewalLinger: RenewalLinger): Promise<void> {
    h = await startGrpcHarness({ renewalLinger });
    await h.rpc.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(60_000) } });
  }

  /** A write that never lingers (a Send's), which takes any lingering renewal along. */
  const writeThatDoesNotLinger = (): Promise<unknown> => h.rpc.send({ queue: "jobs", body: Buffer.from("company") });

  /**
   * The stream's next answer, to a renewal that lingers: writes that do not
   * linger are made until it comes, since the request may reach the broker
   * (on a connection still opening) after the first of them.
   */
  async function nextAnswerWithCompany(stream: HeartbeatStream): Promise<HeartbeatResponse> {
    let answered = false;
    const answer = stream.next().finally(() => (answered = true));
    while (!answered) {
      await writeThatDoesNotLinger();
      await Promise.race([answer, new Promise((resolve) => setTimeout(resolve, 50))]);
    }
    return answer;
  }

  /** A stream holding one fresh lease, renewed once so that the broker counts the stream as open. */
  async function streamWithLease(): Promise<{ stream: HeartbeatStream; receiptHandle: string }> {
    await h.rpc.send({ queue: "jobs", body: Buffer.from("work") });
    const [message] = (await h.rpc.receive({ queue: "jobs" })).messages;
    const stream = openHeartbeatStream(h.server.address);
    streams.push(stream);
    stream.send({ queue: "jobs", leases: [{ receiptHandle: message!.receiptHandle }] });
    expect((await nextAnswerWithCompany(stream)).leases[0]!.held).toBe(true);
    return { stream, receiptHandle: message!.receiptHandle };
  }

  const renew = (held: { stream: HeartbeatStream; receiptHandle: string }): void =>
    held.stream.send({ queue: "jobs", leases: [{ receiptHandle: held.receiptHandle }] });

  it("writes renewals of two streams that arrive apart in one batch, each answered once it is written", async () => {
    await start({ lingerMs: 3000, minStreams: 2 });
    const first = await streamWithLease();
    const second = await streamWithLease();
    const batchesBefore = h.serverOf("jobs").store.commitStats.batches;
    renew(first);
    await new Promise((resolve) => setTimeout(resolve, 300));
    renew(second);
    const answers = await Promise.all([first.stream.next(), second.stream.next()]);
    expect(answers.map((answer) => answer.leases[0]!.held)).toEqual([true, true]);
    expect(h.serverOf("jobs").store.commitStats.batches - batchesBefore).toBe(1);
  });

  it("does not linger for a lone stream, which would have nobody to share a write with", async () => {
    await start({ lingerMs: 60_000, minStreams: 2 });
    const only = await streamWithLease();
    renew(only);
    expect((await only.stream.next()).leases[0]!.held).toBe(true);
  });

  it("does not linger while a stream has requests queued behind, and a write that does not linger takes a lingering one along", async () => {
    await start({ lingerMs: 60_000, minStreams: 2 });
    const busy = await streamWithLease();
    await streamWithLease();
    renew(busy);
    renew(busy);
    renew(busy);
    // The first two had a request behind them: answered without lingering.
    expect((await busy.stream.next()).leases[0]!.held).toBe(true);
    expect((await busy.stream.next()).leases[0]!.held).toBe(true);
    // The third lingers until a write that does not, such as a Send, starts a batch.
    expect((await nextAnswerWithCompany(busy.stream)).leases[0]!.held).toBe(true);
  });
});
