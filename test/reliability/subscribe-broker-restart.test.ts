// A broker process under raw Subscribe consumers that ack what they are
// pushed: killed with SIGKILL and restarted, over and over, it loses no
// acknowledged send and revives no delete whose ack was confirmed; stopped
// with SIGTERM, it ends the streams with SHUTTING_DOWN and the handles they
// held still renew and ack on a new stream after the restart.
import { once } from "node:events";
import { join } from "node:path";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createQueueServiceRpc, type QueueServiceRpc } from "../../src/client/rpc-client.js";
import { startBrokerProcess, type BrokerProcess } from "../support/broker-process.js";
import { openSubscribeStream, type SubscribeStream } from "../support/subscribe-stream.js";
import { makeTempDir } from "../support/temp-dir.js";

const cycles = 3;
// The consumers' leases: short, so that what they held at a kill comes back soon after the restart.
const leaseMs = 2_000;

/** One message in 30 (entry 0 of every third batch) is never acked. */
function neverAcked(body: Uint8Array): boolean {
  const [, batch, entry] = /^batch (\d+) entry (\d+)$/.exec(Buffer.from(body).toString())!;
  return entry === "0" && Number(batch) % 3 === 0;
}

/** What the clients were told, and what they asked. */
interface Ledger {
  /** Messages whose Send or SendBatch answered. */
  readonly sent: Set<string>;
  /** Messages an ack was written for, answered or not. */
  readonly acked: Set<string>;
  /** Messages an AckResult confirmed deleted. */
  readonly deleted: Set<string>;
}

describe("a broker process restarted under Subscribe consumers", () => {
  let dir: { path: string; remove(): Promise<void> };
  let broker: BrokerProcess | undefined;
  let rpc: (QueueServiceRpc & { close(): void }) | undefined;
  const streams: SubscribeStream[] = [];
  beforeEach(async () => {
    dir = await makeTempDir("holdshelf-subscribe-crash-");
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    rpc?.close();
    if (broker && broker.child.exitCode === null && broker.child.signalCode === null) {
      broker.child.kill("SIGKILL");
      await once(broker.child, "exit");
    }
    await dir.remove();
  });

  async function start(): Promise<QueueServiceRpc> {
    rpc?.close();
    broker = await startBrokerProcess(join(dir.path, "data"));
    rpc = createQueueServiceRpc(broker.address);
    return rpc;
  }

  function subscribe(first: Parameters<SubscribeStream["send"]>[0]): SubscribeStream {
    const stream = openSubscribeStream(broker!.address, undefined, { deadlineMs: 20_000 });
    streams.push(stream);
    stream.send(first);
    return stream;
  }

  /** Sends batches until a send fails (the broker died). */
  async function produce(client: QueueServiceRpc, ledger: Ledger): Promise<void> {
    for (let batch = 0; ; batch++) {
      const entries = Array.from({ length: 10 }, (_, i) => ({ body: Buffer.from(`batch ${batch} entry ${i}`) }));
      const answer = await client.sendBatch({ queue: "jobs", entries }).catch(() => undefined);
      if (answer === undefined) return;
      for (const id of answer.messageIds) ledger.sent.add(id);
    }
  }

  /** Acks every delivery of a stream as it comes, until the stream ends. */
  async function consume(stream: SubscribeStream, ledger: Ledger): Promise<void> {
    const idOfHandle = new Map<string, string>();
    const ended = stream.closed.then(() => undefined);
    for (;;) {
      const response = await Promise.race([stream.next(), ended]);
      if (response === undefined) return;
      for (const ack of response.acks) if (ack.reason === "") ledger.deleted.add(idOfHandle.get(ack.receiptHandle)!);
      // Some messages are never acked: they must outlive every kill, redelivered until the drain.
      const acking = response.messages.filter((message) => !neverAcked(message.body));
      if (acking.length === 0) continue;
      for (const message of acking) {
        idOfHandle.set(message.receiptHandle, message.messageId);
        ledger.acked.add(message.messageId);
      }
      stream.send({ ackReceiptHandles: acking.map((message) => message.receiptHandle) });
    }
  }

  /** Receives and deletes every message left, waiting out the leases of the last run; returns their ids. */
  async function drain(client: QueueServiceRpc): Promise<string[]> {
    const ids: string[] = [];
    const deadline = Date.now() + leaseMs + 10_000;
    for (;;) {
      const { visible, inFlight, delayed } = (await client.getQueue({ name: "jobs" })).queue!.stats!;
      if (visible + inFlight + delayed === 0n || Date.now() > deadline) return ids;
      const { messages } = await client.receive({ queue: "jobs", maxMessages: 10, waitTime: durationFromMs(500) });
      for (const message of messages) {
        ids.push(message.messageId);
        await client.delete({ queue: "jobs", receiptHandle: message.receiptHandle });
      }
    }
  }

  it(`SIGKILL ${cycles} times: no acknowledged send is lost, no confirmed ack comes back`, async () => {
    const ledger: Ledger = { sent: new Set(), acked: new Set(), deleted: new Set() };
    await (await start()).createQueue({ name: "jobs" });
    for (let cycle = 0; cycle < cycles; cycle++) {
      if (cycle > 0) await start();
      const first = {
        queue: "jobs",
        visibilityTimeout: durationFromMs(leaseMs),
        flowControl: { maxOutstandingMessages: 20 },
      };
      const load = [produce(rpc!, ledger), consume(subscribe(first), ledger), consume(subscribe(first), ledger)];
      const deletedBefore = ledger.deleted.size;
      // Killed mid-load, once the consumers have confirmed acks of this run.
      const started = Date.now();
      while (ledger.deleted.size < deletedBefore + 30 && Date.now() - started < 10_000)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 100 + cycle * 150));
      broker!.child.kill("SIGKILL");
      await once(broker!.child, "exit");
      await Promise.all(load);
      expect(ledger.deleted.size, `confirmed acks in run ${cycle}`).toBeGreaterThanOrEqual(deletedBefore + 30);
    }
    const drained = await drain(await start());

    expect(new Set(drained).size, "a message received twice in the drain").toBe(drained.length);
    const revived = drained.filter((id) => ledger.deleted.has(id));
    expect(revived, "messages whose ack was confirmed came back").toEqual([]);
    const lost = [...ledger.sent].filter((id) => !ledger.acked.has(id) && !drained.includes(id));
    expect(lost, "acknowledged sends that no ack named are gone").toEqual([]);
    expect(ledger.sent.size).toBeGreaterThan(100);
    expect(ledger.sent.size - ledger.acked.size, "messages never acked, which the drain must find").toBeGreaterThan(0);
    console.log(
      `subscribe kill-restart: ${cycles} kills; ${ledger.sent.size} sends acknowledged, ${ledger.acked.size} acked, ` +
        `${ledger.deleted.size} acks confirmed, ${drained.length} left after the last restart`,
    );
  }, 60_000);

  it("SIGTERM ends the streams with SHUTTING_DOWN, and their handles renew and ack on a new stream after the restart", async () => {
    const client = await start();
    await client.createQueue({ name: "jobs", config: { visibilityTimeout: durationFromMs(60_000) } });
    for (const body of ["a", "b", "c"]) await client.send({ queue: "jobs", body: Buffer.from(body) });
    const releasing = subscribe({
      queue: "jobs",
      releaseOnDisconnect: true,
      flowControl: { maxOutstandingMessages: 2 },
    });
    const held = await releasing.deliveries(2);
    const keeping = subscribe({ queue: "jobs", flowControl: { maxOutstandingMessages: 5 } });
    held.push(...(await keeping.deliveries(1)));

    broker!.child.kill("SIGTERM");
    for (const stream of [releasing, keeping]) {
      const error = await stream.closed;
      expect({ code: error?.code, reason: error?.reason }).toEqual({
        code: status.UNAVAILABLE,
        reason: "SHUTTING_DOWN",
      });
    }
    const [code] = (await once(broker!.child, "exit")) as [number];
    expect(code).toBe(0);

    const restarted = await start();
    expect((await restarted.getQueue({ name: "jobs" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 3n });
    const handles = held.map((message) => message.receiptHandle);
    const again = subscribe({
      queue: "jobs",
      flowControl: { maxOutstandingMessages: 3 },
      leases: handles.map((receiptHandle) => ({ receiptHandle, visibilityTimeout: durationFromMs(30_000) })),
    });
    expect((await again.next()).leases.map((lease) => [lease.held, lease.reason])).toEqual(
      handles.map(() => [true, ""]),
    );
    again.send({ ackReceiptHandles: handles });
    let { acks } = await again.next();
    while (acks.length === 0) ({ acks } = await again.next());
    expect(acks.map((ack) => ack.reason)).toEqual(["", "", ""]);
    expect((await restarted.getQueue({ name: "jobs" })).queue!.stats).toMatchObject({ visible: 0n, inFlight: 0n });
  });
});
