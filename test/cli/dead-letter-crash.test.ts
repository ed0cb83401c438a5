import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReceivedMessage } from "../../gen/holdshelf/v1/message_pb.js";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { makeTempDir } from "../support/temp-dir.js";

const messageCount = 400;
const killCycles = 8;
const leaseMs = 200;
const maxKillDelayMs = 250;
// Small receives, spaced out, so that dead-lettering runs through every cycle
// instead of finishing in the first: about 10 messages a receive, a receive
// every 25 ms or so, 50 messages in an average cycle.
const maxReceiveBatch = 20;
const receivePauseMs = 10;

/** A small seeded PRNG (mulberry32): the same seed gives the same kill points and batch sizes. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rpc = ReturnType<typeof createQueueServiceRpc>;

/** Whether the broker process has not exited yet. */
function isAlive(broker: BrokerProcess): boolean {
  return broker.child.exitCode === null && broker.child.signalCode === null;
}

describe("dead-lettering across crashes of the broker process", () => {
  let dir: { path: string; remove(): Promise<void> };
  let broker: BrokerProcess | undefined;
  let rpc: Rpc | undefined;
  beforeEach(async () => {
    dir = await makeTempDir();
  });
  afterEach(async () => {
    rpc?.close();
    rpc = undefined;
    if (broker && isAlive(broker)) {
      broker.child.kill("SIGKILL");
      await once(broker.child, "exit");
    }
    broker = undefined;
    await dir.remove();
  });

  it("leaves every message exactly once in the queue or its dead-letter queue, whenever the process is killed", async () => {
    // HOLDSHELF_CRASH_SEED reruns a failure with the same kill points.
    const seed = Number(process.env["HOLDSHELF_CRASH_SEED"] ?? Math.floor(Math.random() * 2 ** 32));
    console.log(`dead-letter crash test: HOLDSHELF_CRASH_SEED=${seed}`);
    // Two streams, so the kill points do not shift with how many receives
    // a cycle happened to make.
    const killDelays = seededRandom(seed);
    const batchSizes = seededRandom(seed ^ 0x5bd1e995);
    const context = `HOLDSHELF_CRASH_SEED=${seed}`;

    const dataDir = join(dir.path, "data");
    broker = await startBrokerProcess(dataDir);
    rpc = createQueueServiceRpc(broker.address);
    await rpc.createQueue({ name: "dlq" });
    await rpc.createQueue({
      name: "work",
      config: {
        visibilityTimeout: durationFromMs(leaseMs),
        redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 1 },
      },
    });
    const bodies = new Map<string, string>();
    for (let start = 0; start < messageCount; start += 100) {
      const entries = Array.from({ length: 100 }, (_, i) => ({ body: Buffer.from(`message ${start + i}`) }));
      const { messageIds } = await rpc.sendBatch({ queue: "work", entries });
      messageIds.forEach((id, i) => {
        bodies.set(id, `message ${start + i}`);
      });
    }
    expect(bodies.size).toBe(messageCount);

    // Deliveries from "work" the client saw, by message id. A receive that
    // failed because the broker died may have leased messages the client
    // never saw: at most `unseenAtMost` of them.
    const deliveries = new Map<string, number>();
    let unseenAtMost = 0;
    const record = (messages: readonly ReceivedMessage[], when: string): void => {
      for (const message of messages) {
        expect(bodies.has(message.messageId), `${context}: unknown id ${message.messageId} in ${when}`).toBe(true);
        expect(message.receiveCount, `${context}: receive count of ${message.messageId} in ${when}`).toBe(1);
        deliveries.set(message.messageId, (deliveries.get(message.messageId) ?? 0) + 1);
      }
    };
    const receiveFromWork = (client: Rpc, maxMessages: number) =>
      client.receive(
        { queue: "work", maxMessages, visibilityTimeout: durationFromMs(leaseMs), waitTime: durationFromMs(0) },
        { deadline: Date.now() + 10_000 },
      );

    // What each cycle did, printed so a failure shows where the run was.
    const trace: string[] = [];
    for (let cycle = 0; cycle < killCycles; cycle++) {
      const client: Rpc = rpc;
      const current: BrokerProcess = broker;
      let killing = false;
      const receiving = (async () => {
        while (!killing) {
          const maxMessages = 1 + Math.floor(batchSizes() * maxReceiveBatch);
          let messages: ReceivedMessage[];
          try {
            ({ messages } = await receiveFromWork(client, maxMessages));
          } catch (error) {
            // Only the kill may fail a call; the broker may have leased before dying.
            if (!killing) throw error;
            unseenAtMost += maxMessages;
            return;
          }
          record(messages, `cycle ${cycle}`);
          await sleep(receivePauseMs);
        }
      })();
      const killDelayMs = Math.floor(killDelays() * (maxKillDelayMs + 1));
      await Promise.race([sleep(killDelayMs), receiving]);
      killing = true;
      current.child.kill("SIGKILL");
      await once(current.child, "exit");
      await receiving;
      client.close();
      broker = await startBrokerProcess(dataDir);
      rpc = createQueueServiceRpc(broker.address);
      // A message written into "dlq" and still on disk in "work" would be
      // counted twice now. "dlq" is read first: a move takes a message out of
      // "work" before it shows it in "dlq", so this order never counts one twice.
      const dlq = (await rpc.getQueue({ name: "dlq" })).queue!.stats!;
      const work = (await rpc.getQueue({ name: "work" })).queue!.stats!;
      const inWork = work.visible + work.inFlight + work.delayed;
      trace.push(
        `kill ${cycle} at ${killDelayMs} ms: ${deliveries.size} seen; after restart ${inWork} in "work", ${dlq.visible} in "dlq"`,
      );
      expect(
        inWork + dlq.visible + dlq.inFlight + dlq.delayed,
        `${context}: counted twice\n${trace.join("\n")}`,
      ).toBeLessThanOrEqual(BigInt(messageCount));
    }
    console.log(trace.join("\n"));

    // No more crashes: lease whatever was never received, and wait for
    // every lease to end in a move. Once "work" is empty nothing more can
    // arrive in "dlq", so a count that stays short for a second is a loss,
    // which the drain below names.
    let quietPolls = 0;
    let lastDlqVisible = -1n;
    for (let poll = 0; poll < 100; poll++) {
      const work = (await rpc.getQueue({ name: "work" })).queue!.stats!;
      const dlq = (await rpc.getQueue({ name: "dlq" })).queue!.stats!;
      const workEmpty = work.visible === 0n && work.inFlight === 0n && work.delayed === 0n;
      quietPolls = workEmpty && dlq.visible === lastDlqVisible ? quietPolls + 1 : 0;
      lastDlqVisible = dlq.visible;
      if (workEmpty && (dlq.visible === BigInt(messageCount) || quietPolls >= 10)) break;
      if (work.visible > 0n) record((await receiveFromWork(rpc, 100)).messages, "the final receives");
      await sleep(100);
    }
    const workStats = (await rpc.getQueue({ name: "work" })).queue!.stats!;
    expect(
      { visible: workStats.visible, inFlight: workStats.inFlight, delayed: workStats.delayed },
      `${context}: "work" at the end`,
    ).toEqual({
      visible: 0n,
      inFlight: 0n,
      delayed: 0n,
    });

    // Drain both queues with a long lease, so nothing comes back meanwhile.
    const found = new Map<string, string[]>();
    for (const queue of ["work", "dlq"]) {
      for (let calls = 0; calls <= messageCount / 100 + 1; calls++) {
        const { messages } = await rpc.receive({ queue, maxMessages: 100, visibilityTimeout: durationFromMs(600_000) });
        if (messages.length === 0) break;
        for (const message of messages) {
          found.set(message.messageId, [...(found.get(message.messageId) ?? []), queue]);
          expect(Buffer.from(message.body).toString(), `${context}: body of ${message.messageId}`).toBe(
            bodies.get(message.messageId),
          );
          if (queue === "dlq") {
            expect(message.deadLetterSourceQueue, `${context}: source of ${message.messageId}`).toBe("work");
            expect(message.deadLetterReason, `${context}: reason for ${message.messageId}`).toBe(
              "MAX_RECEIVE_COUNT_EXCEEDED",
            );
          }
        }
      }
    }
    const missing = [...bodies.keys()].filter((id) => !found.has(id));
    const duplicated = [...found].filter(([, queues]) => queues.length > 1);
    const unknown = [...found.keys()].filter((id) => !bodies.has(id));
    const stillInWork = [...found].filter(([, queues]) => queues.includes("work"));
    expect({ missing, duplicated, unknown, stillInWork }, context).toEqual({
      missing: [],
      duplicated: [],
      unknown: [],
      stillInWork: [],
    });

    // max_receive_count 1: no message was delivered from "work" twice, and
    // the ones never seen are no more than the receives the kills cut off.
    const redelivered = [...deliveries].filter(([, count]) => count > 1);
    expect(redelivered, `${context}: delivered from "work" more than once`).toEqual([]);
    const unseen = messageCount - deliveries.size;
    expect(unseen, `${context}: deliveries the client never saw`).toBeLessThanOrEqual(unseenAtMost);
  }, 120_000);
});
