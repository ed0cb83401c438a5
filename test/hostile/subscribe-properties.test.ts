// Property-based tests of Subscribe against a real broker (real gRPC on a
// real port, real LevelDB, a fake clock so that no lease runs out on its
// own): random and boundary streams, sent as raw bytes (first requests of
// every kind, acks of random, real and forged handles, renewals with bad
// durations and checkpoints past 64 KiB, flow control out of bounds, broken
// encodings). Each stream must end in time, OK or with a documented error;
// each request with acks or renewals must be answered once, in order, naming
// its handles; and afterwards no message is lost or duplicated: what is left
// is what was sent less what an ack confirmed deleted, and every message left
// is still received once and deleted.
// Reproduce a failure with HOLDSHELF_FC_SEED=<seed printed by fast-check>.
import { fromBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscribeRequestSchema, type SubscribeResponse } from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { RpcError } from "../../src/client/rpc-error.js";
import { FakeClock } from "../support/fake-clock.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import type { RequestFixture } from "./rpc-arbitraries.js";
import { rejectionProblem } from "./rpc-outcome.js";
import { renewalField, subscribeScript, type SubscribeStep } from "./subscribe-requests.js";
import * as wire from "./wire-encoder.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20261205);
// Sized so that this file runs in well under 40 s on a loaded 2-core machine.
const numRuns = Number(process.env["HOLDSHELF_FC_RUNS"] ?? 40);
// Every stream must end within this after it opens.
const streamDeadlineMs = 10_000;
// Past every lease and retry delay a request may set (max_lease_duration and the retry backoff: 12 h at most).
const pastEveryLeaseMs = 13 * 60 * 60 * 1000;
const ackReasons = new Set(["", "RECEIPT_HANDLE_INVALID", "LEASE_SUPERSEDED"]);

let harness: GrpcHarness;
const clock = new FakeClock();

beforeAll(async () => {
  harness = await startGrpcHarness({ durability: "os", clock });
});

afterAll(async () => {
  await harness.stop();
});

/** A run's queues and what they hold: each message's id by every receipt handle known for it. */
interface SubscribeFixture extends RequestFixture {
  readonly messageIds: Set<string>;
  readonly idOfHandle: Map<string, string>;
}

/**
 * Two queues named after `tag`, each with 2 visible and 2 leased messages
 * (leased for an hour), and a FIFO queue with 2 messages in group "g".
 */
async function makeFixture(tag: string): Promise<SubscribeFixture> {
  const queues = [`${tag}-a`, `${tag}-b`];
  const messageIds = new Set<string>();
  const idOfHandle = new Map<string, string>();
  const leased: string[][] = [];
  for (const name of queues) {
    await harness.rpc.createQueue({ name });
    for (let i = 0; i < 4; i++)
      messageIds.add((await harness.rpc.send({ queue: name, body: Buffer.from(`${name} ${i}`) })).messageId);
    const received = await harness.rpc.receive({ queue: name, maxMessages: 2, visibilityTimeout: { seconds: 3600n } });
    for (const message of received.messages) idOfHandle.set(message.receiptHandle, message.messageId);
    leased.push(received.messages.map((m) => m.receiptHandle));
  }
  const fifo = `${tag}-f.fifo`;
  await harness.rpc.createQueue({ name: fifo, config: { fifo: true } });
  for (const id of ["order-1", "order-2"]) {
    const sent = await harness.rpc.send({
      queue: fifo,
      body: Buffer.from(id),
      messageGroupId: "g",
      deduplicationId: id,
    });
    messageIds.add(sent.messageId);
  }
  return { queues: [...queues, fifo], handles: leased[0]!, otherQueueHandles: leased[1]!, messageIds, idOfHandle };
}

/** The handles a request's answer must name, in order; undefined when it gets none (or cannot be decoded). */
interface ExpectedAnswer {
  readonly acks: string[];
  readonly leases: string[];
}

function expectedAnswer(bytes: Buffer): ExpectedAnswer | undefined {
  try {
    const request = fromBinary(SubscribeRequestSchema, bytes);
    if (request.ackReceiptHandles.length === 0 && request.leases.length === 0) return undefined;
    return { acks: request.ackReceiptHandles, leases: request.leases.map((lease) => lease.receiptHandle) };
  } catch {
    return undefined;
  }
}

/** How a script's stream went: the answers each request must get, the responses it got, how it ended. */
interface ScriptOutcome {
  readonly expected: ExpectedAnswer[];
  readonly responses: SubscribeResponse[];
  readonly error: RpcError | undefined;
}

/** Plays a script on a new stream, half-closes it, and waits for its end. */
async function play(steps: SubscribeStep[]): Promise<ScriptOutcome> {
  const stream = openSubscribeStream(harness.server.address, undefined, { deadlineMs: streamDeadlineMs });
  let ended = false;
  const closed = stream.closed.then((error) => {
    ended = true;
    return error;
  });
  const expected: ExpectedAnswer[] = [];
  try {
    for (const step of steps) {
      if (ended) break;
      if (step.kind === "wait") {
        await firstDelivery(stream, () => ended);
        continue;
      }
      const bytes = step.kind === "request" ? step.bytes : await fromDeliveries(stream, step, () => ended);
      const answer = expectedAnswer(bytes);
      if (answer) expected.push(answer);
      stream.sendBytes(bytes);
    }
    stream.end();
    const error = await closed;
    return { expected, responses: [...stream.buffered], error };
  } finally {
    stream.close();
  }
}

/** The handles delivered to a stream so far. */
function delivered(stream: SubscribeStream): string[] {
  return stream.buffered.flatMap((response) => response.messages.map((m) => m.receiptHandle));
}

/** Waits up to 200 ms for a stream's first delivery, unless it has one or has ended. */
async function firstDelivery(stream: SubscribeStream, ended: () => boolean): Promise<void> {
  for (let waited = 0; delivered(stream).length === 0 && !ended() && waited < 200; waited += 10)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A request of the handles delivered so far, after waiting briefly for one if none came yet. */
async function fromDeliveries(
  stream: SubscribeStream,
  step: Extract<SubscribeStep, { kind: "ack-delivered" | "renew-delivered" }>,
  ended: () => boolean,
): Promise<Buffer> {
  await firstDelivery(stream, ended);
  const handles = delivered(stream);
  if (step.kind === "ack-delivered")
    return wire.concat(...(step.twice ? [...handles, ...handles] : handles).map((h) => wire.stringField(5, h)));
  return wire.concat(...handles.map((handle) => renewalField(handle, step)));
}

/** Why a stream's outcome breaks the contract, or undefined; adds the messages its acks deleted to `deleted`. */
function outcomeProblem(fixture: SubscribeFixture, outcome: ScriptOutcome, deleted: Set<string>): string | undefined {
  const { expected, responses, error } = outcome;
  if (error) {
    const problem = rejectionProblem(error);
    if (problem) return problem;
  }
  for (const message of responses.flatMap((response) => response.messages)) {
    if (!fixture.messageIds.has(message.messageId))
      return `delivered a message of no fixture queue: ${message.messageId}`;
    fixture.idOfHandle.set(message.receiptHandle, message.messageId);
  }
  const answers = responses.filter((response) => response.acks.length > 0 || response.leases.length > 0);
  // Ended OK on the half-close: every request was answered. Ended by an error: those before it may be.
  if (error === undefined ? answers.length !== expected.length : answers.length > expected.length)
    return `${answers.length} answers to ${expected.length} requests with acks or renewals (${error?.reason ?? "OK"})`;
  for (const [i, answer] of answers.entries()) {
    const names = { acks: answer.acks.map((a) => a.receiptHandle), leases: answer.leases.map((l) => l.receiptHandle) };
    if (JSON.stringify(names) !== JSON.stringify(expected[i]))
      return `answer ${i} names other handles than its request`;
    for (const ack of answer.acks) {
      if (!ackReasons.has(ack.reason)) return `ack answered ${JSON.stringify(ack.reason)}`;
      const id = fixture.idOfHandle.get(ack.receiptHandle);
      if (ack.reason === "" && id !== undefined) deleted.add(id);
    }
    for (const lease of answer.leases) {
      if (lease.held ? lease.reason !== "" : lease.reason === "" || lease.reason === "INTERNAL")
        return `renewal answered ${JSON.stringify(lease)}`;
    }
  }
  return undefined;
}

/** Receives and deletes every message of the fixture's queues; returns their ids, a repeat included twice. */
async function drain(fixture: SubscribeFixture): Promise<string[]> {
  const ids: string[] = [];
  for (const queue of fixture.queues) {
    for (let round = 0; round < 10; round++) {
      const { messages } = await harness.rpc.receive({ queue, maxMessages: 10, visibilityTimeout: { seconds: 60n } });
      if (messages.length === 0) break;
      for (const message of messages) {
        ids.push(message.messageId);
        await harness.rpc.delete({ queue, receiptHandle: message.receiptHandle });
      }
    }
  }
  return ids;
}

async function storedCount(fixture: SubscribeFixture): Promise<bigint> {
  let total = 0n;
  for (const name of fixture.queues) {
    const { visible, inFlight, delayed } = (await harness.rpc.getQueue({ name })).queue!.stats!;
    total += visible + inFlight + delayed;
  }
  return total;
}

describe("Subscribe, with random and boundary streams", () => {
  it("ends each stream in time, OK or with a documented error, answers in order, and loses or repeats no message", async () => {
    let run = 0;
    // The arbitrary draws names and handles from a template fixture; each run gets queues of its own, and
    // retarget() swaps the template's names and handles for the run's, which have the same lengths.
    const template = await makeFixture("s-tmpl");
    await fc.assert(
      fc.asyncProperty(subscribeScript(template), async (templateSteps) => {
        const fixture = await makeFixture(`s-${String(run++).padStart(4, "0")}`);
        const steps = templateSteps.map((step) => retarget(step, template, fixture));
        const outcome = await play(steps);
        const deleted = new Set<string>();
        const problem = outcomeProblem(fixture, outcome, deleted);
        if (problem) throw new Error(problem);
        // A refused request ends the stream after the answers of those before it, and is itself not applied:
        // what is left is exactly what no confirmed ack deleted.
        const left = [...fixture.messageIds].filter((id) => !deleted.has(id)).sort();
        expect(await storedCount(fixture), "messages stored after the stream").toBe(BigInt(left.length));
        clock.advance(pastEveryLeaseMs);
        expect((await drain(fixture)).sort(), "messages received once each after the stream").toEqual(left);
      }),
      { numRuns, seed },
    );
    // The server is alive, and the streams the property opened are all gone.
    await harness.rpc.listQueues({}, { deadline: Date.now() + 5_000 });
    await expect.poll(() => harness.server.broker.streams.count).toBe(0);
  }, 90_000);
});

describe("refused requests", () => {
  it("a refused request behind one with acks: those acks are answered first, then the stream ends with INVALID_ARGUMENT naming the field", async () => {
    const fixture = await makeFixture("s-refused");
    const stream = openSubscribeStream(harness.server.address, undefined, { deadlineMs: streamDeadlineMs });
    try {
      stream.send({ queue: fixture.queues[0]!, flowControl: { maxOutstandingMessages: 0 } });
      stream.send({ ackReceiptHandles: [fixture.handles[0]!] });
      stream.send({ flowControl: { maxOutstandingMessages: 10_001 } });
      const error = await stream.closed;
      expect(error?.violations.map((v) => v.field)).toEqual(["flow_control.max_outstanding_messages"]);
      expect(stream.buffered.map((response) => response.acks.map((ack) => ack.reason))).toEqual([[""]]);
      // The answered ack deleted its message; the refused request changed nothing.
      expect(await storedCount(fixture)).toBe(BigInt(fixture.messageIds.size - 1));
    } finally {
      stream.close();
    }
  });

  it("a request with acks and more than 1000 renewals is refused whole: its acks delete nothing", async () => {
    const fixture = await makeFixture("s-too-many");
    const stream = openSubscribeStream(harness.server.address, undefined, { deadlineMs: streamDeadlineMs });
    try {
      stream.send({ queue: fixture.queues[0]!, flowControl: { maxOutstandingMessages: 0 } });
      stream.send({
        ackReceiptHandles: [fixture.handles[0]!],
        leases: Array.from({ length: 1_001 }, () => ({ receiptHandle: "x" })),
      });
      const error = await stream.closed;
      expect(error?.violations.map((v) => v.field)).toEqual(["leases"]);
      expect(stream.buffered.flatMap((response) => response.acks)).toEqual([]);
      expect(await storedCount(fixture)).toBe(BigInt(fixture.messageIds.size));
    } finally {
      stream.close();
    }
  });
});

/** A template step with the template's queue names and handles replaced by the run's own. */
function retarget(step: SubscribeStep, from: RequestFixture, to: RequestFixture): SubscribeStep {
  if (step.kind !== "request") return step;
  let bytes = step.bytes;
  const pairs: [string, string][] = [
    ...from.queues.map((name, i): [string, string] => [name, to.queues[i]!]),
    ...from.handles.map((handle, i): [string, string] => [handle, to.handles[i]!]),
    ...from.otherQueueHandles.map((handle, i): [string, string] => [handle, to.otherQueueHandles[i]!]),
  ];
  for (const [old, now] of pairs) bytes = replaceAll(bytes, Buffer.from(old), Buffer.from(now));
  return { kind: "request", bytes };
}

/** `bytes` with every occurrence of `old` replaced by `now`, which must be as long (lengths in the encoding stay right). */
function replaceAll(bytes: Buffer, old: Buffer, now: Buffer): Buffer {
  if (old.length !== now.length) throw new Error("a retargeted name or handle must keep its length");
  const out = Buffer.from(bytes);
  for (let at = out.indexOf(old); at !== -1; at = out.indexOf(old, at + old.length)) now.copy(out, at);
  return out;
}
