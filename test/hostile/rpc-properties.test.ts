// Property-based tests over every QueueService RPC against a real broker
// (real gRPC on a real port, real LevelDB): random and boundary requests,
// sent as raw bytes, must each be answered in time with OK or a documented
// error, never INTERNAL, and a rejected call must change nothing stored.
// Reproduce a failure with HOLDSHELF_FC_SEED=<seed printed by fast-check>.
import { fromBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChangeVisibilityBatchResponseSchema,
  DeleteBatchResponseSchema,
  HeartbeatResponseSchema,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";
import { brokerSnapshot } from "./broker-snapshot.js";
import { createRawRpc, type RawRpc } from "./raw-rpc.js";
import type { RequestFixture } from "./rpc-arbitraries.js";
import { entryProblem, rejectionProblem } from "./rpc-outcome.js";
import { heartbeatRequest, unaryRequests } from "./rpc-requests.js";

const seed = Number(process.env["HOLDSHELF_FC_SEED"] ?? 20260802);
// Sized so that this file runs in well under 40 s on a loaded 2-core machine.
const numRuns = Number(process.env["HOLDSHELF_FC_RUNS"] ?? 40);
// Every call must answer within this, waits included (valid waits are at most 300 ms).
const callDeadlineMs = 10_000;

const batchResults: Record<string, (bytes: Buffer) => { code: number; reason: string; message: string }[]> = {
  DeleteBatch: (bytes) => fromBinary(DeleteBatchResponseSchema, bytes).results,
  ChangeVisibilityBatch: (bytes) => fromBinary(ChangeVisibilityBatchResponseSchema, bytes).results,
};

let harness: GrpcHarness;
let raw: RawRpc;

beforeAll(async () => {
  harness = await startGrpcHarness({ durability: "os" });
  raw = createRawRpc(harness.server.address);
});

afterAll(async () => {
  raw.close();
  await harness.stop();
});

/**
 * Two queues named after `tag`, each with 2 visible and 2 leased messages
 * (leased for an hour, so nothing expires mid-test), and a FIFO queue with
 * 2 messages in group "g", so that FIFO fields meet a queue that takes them.
 */
async function makeFixture(tag: string): Promise<RequestFixture> {
  const queues = [`${tag}-a`, `${tag}-b`];
  const leased: string[][] = [];
  for (const name of queues) {
    await harness.rpc.createQueue({ name });
    for (let i = 0; i < 4; i++) {
      await harness.rpc.send({ queue: name, body: Buffer.from(`${name} ${i}`), attributes: { n: String(i) } });
    }
    const received = await harness.rpc.receive({ queue: name, maxMessages: 2, visibilityTimeout: { seconds: 3600n } });
    leased.push(received.messages.map((m) => m.receiptHandle));
  }
  const fifo = `${tag}-f.fifo`;
  await harness.rpc.createQueue({ name: fifo, config: { fifo: true } });
  for (const id of ["order-1", "order-2"])
    await harness.rpc.send({ queue: fifo, body: Buffer.from(id), messageGroupId: "g", deduplicationId: id });
  return { queues: [...queues, fifo], handles: leased[0]!, otherQueueHandles: leased[1]! };
}

async function expectServerAlive(): Promise<void> {
  const page = await harness.rpc.listQueues({}, { deadline: Date.now() + 5_000 });
  expect(page.queues.length).toBeGreaterThan(0);
}

describe("the snapshot", () => {
  it("sees a change of a message's lease, receive count or content, and of a queue's configuration", async () => {
    const fixture = await makeFixture("snapshot");
    const queue = fixture.queues[0]!;
    const steps: (() => Promise<unknown>)[] = [
      () =>
        harness.rpc.changeVisibility({
          queue,
          receiptHandle: fixture.handles[0]!,
          visibilityTimeout: { seconds: 7200n },
        }),
      () => harness.rpc.receive({ queue, visibilityTimeout: {} }),
      () => harness.rpc.send({ queue, body: Buffer.from("one more") }),
      () => harness.rpc.updateQueue({ name: queue, config: { delay: { seconds: 1n } } }),
    ];
    for (const step of steps) {
      const before = await brokerSnapshot(harness.server);
      await step();
      expect(await brokerSnapshot(harness.server)).not.toBe(before);
    }
  });
});

describe("every unary RPC, with random and boundary requests", () => {
  const methods = Object.keys(unaryRequests({ queues: ["x"], handles: [], otherQueueHandles: [] }));

  it.each(methods)(
    "%s: answers in time, OK or a documented error with its field; a rejection changes nothing",
    async (method) => {
      const fixture = await makeFixture(`p-${method}`);
      const requests = unaryRequests(fixture)[method]!;
      await fc.assert(
        fc.asyncProperty(requests, async (request) => {
          const before = await brokerSnapshot(harness.server);
          const outcome = await raw.unary(method, request, callDeadlineMs);
          if (outcome.ok) {
            for (const entry of batchResults[method]?.(outcome.response) ?? []) {
              const problem = entryProblem(entry);
              if (problem) throw new Error(problem);
            }
            return;
          }
          const problem = rejectionProblem(outcome.error);
          if (problem) throw new Error(problem);
          expect(await brokerSnapshot(harness.server), "a rejected call changed stored data").toBe(before);
        }),
        { numRuns, seed },
      );
      await expectServerAlive();
    },
    60_000,
  );
});

describe("Heartbeat, with random and boundary requests", () => {
  it("answers each request or ends with a documented error; renewals that hold nothing change nothing", async () => {
    const fixture = await makeFixture("p-Heartbeat");
    await fc.assert(
      fc.asyncProperty(fc.array(heartbeatRequest(fixture), { minLength: 1, maxLength: 3 }), async (requests) => {
        const before = await brokerSnapshot(harness.server);
        const { responses, error } = await raw.heartbeat(requests, callDeadlineMs);
        if (error) {
          const problem = rejectionProblem(error);
          if (problem) throw new Error(problem);
        } else {
          // Ended OK on the half-close: every request was answered, none was pushed a notice (leases last an hour).
          expect(responses.length).toBe(requests.length);
        }
        let changed = false;
        for (const response of responses) {
          for (const lease of fromBinary(HeartbeatResponseSchema, response).leases) {
            if (lease.held || lease.reason === "RELEASED") changed = true;
            else if (lease.reason === "INTERNAL" || lease.reason === "")
              throw new Error(`renewal answered ${JSON.stringify(lease)}`);
          }
        }
        if (!changed)
          expect(await brokerSnapshot(harness.server), "a renewal that held nothing changed stored data").toBe(before);
      }),
      { numRuns, seed },
    );
    await expectServerAlive();
    // The streams the property opened are all gone.
    await expect.poll(() => harness.server.broker.streams.count).toBe(0);
  }, 60_000);
});
