/**
 * Scenario 5: restart. A broker holds `size` stored messages (default
 * 1,000,000, 1 KiB bodies), a quarter of them in flight under 1 h leases (but
 * under max_in_flight's bound of 1,000,000, so 999,999 of 10,000,000), and
 * is stopped gracefully; a new broker process on the same data directory is
 * then timed from just before its spawn to the first Receive that returns a
 * message, and its resident memory read a second later.
 *
 * How: SendBatch 100 from 8 producers; Receive 100 from 8 consumers for the
 * quarter; SIGTERM. The harness' broker start resolves at the "holdshelf
 * listening" log line, which comes after the store is loaded; from there,
 * Receive (max 1, wait 0) in a loop until one returns a message.
 *
 * Memory: the broker keeps no bodies in memory, only its index, one entry
 * per stored message (ready time, lease state, counters) in a map and a
 * deadline heap. So (RSS loaded − RSS of an empty broker) / stored messages
 * is the index's cost per stored message, leased or not; the issue's "per
 * in-flight message, bodies excluded" is read as that figure. The empty
 * broker has the same queue and has served one Receive, so that both
 * readings include the same code warmed up; neither forces a GC.
 *
 * The row's msg/s is stored messages indexed per second of startup (size /
 * ready time), its CPU the restarted process's CPU from spawn to ready, its
 * peak RSS that process's peak; the fill's rate is in the extra figures.
 */
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { setTimeout as sleep } from "node:timers/promises";
import { createQueueServiceRpc } from "../../src/client/rpc-client.js";
import { readCommitCounters, requireValue, scrapeBroker } from "../broker-scrape.js";
import { monotonicMs, sampleProcess } from "../proc-stats.js";
import { resultOf, type Scenario } from "../scenario.js";
import { progressLog, receiveMessages, sendMessages } from "../bulk-load.js";

const queue = "bench";
const producers = 8;
const consumers = 8;
/** Far longer than the scenario: the in-flight quarter must still be in flight after the restart. */
const inFlightLeaseMs = 60 * 60_000;
/** How long after start (empty) or after ready (loaded) the RSS is read. */
const settleMs = 1_000;
/** The broker's max_in_flight bound. */
const maxInFlightBound = 1_000_000;
// The targets: ready in 3 s at 1,000,000 stored and 30 s at
// 10,000,000 (3 µs per stored message), at most 150 B of RSS per stored
// message, and at most 2.5 GiB of RSS in all at 10,000,000.
const targetReadyMsPerMessage = 0.003;
const targetBytesPerMessage = 150;
const targetRssBytes = 2.5 * 2 ** 30;
const targetRssFrom = 10_000_000;
// The broker's default --max-stored-messages, past which a fill needs a higher limit.
// (No larger V8 heap: the index's columns are typed arrays, outside it.)
const defaultMaxStored = 5_000_000;

export const restart: Scenario = {
  name: "restart",
  sizeMeaning: "stored messages, a quarter in flight",
  defaultSize: 1_000_000,
  async run(context) {
    const stored = context.size ?? this.defaultSize;
    // One under the bound: the first Receive after the restart leases one more.
    const inFlight = Math.min(Math.floor(stored / 4), maxInFlightBound - 1);
    const flags =
      stored <= defaultMaxStored ? undefined : { node: [], serve: ["--max-stored-messages", String(stored)] };

    const empty = await context.startBroker(undefined, flags);
    await createBenchQueue(empty.address, inFlight);
    await receiveFirst(empty.address, 0);
    await sleep(settleMs);
    const rssEmpty = sampleProcess(empty.pid).rssBytes;
    const heapEmpty = await readHeapUsedBytes(empty.metricsAddress);
    await empty.stop();

    const filler = await context.startBroker(undefined, flags);
    await createBenchQueue(filler.address, inFlight);
    const fill = progressLog(context.log, "restart: stored", stored, 10_000);
    await sendMessages(filler.address, queue, stored, producers, fill);
    const fillSeconds = fill.seconds();
    const lease = progressLog(context.log, "restart: leased", inFlight, 10_000);
    await receiveMessages(filler.address, queue, inFlight, consumers, inFlightLeaseMs, lease);
    context.log(
      `restart: ${stored} stored in ${fillSeconds.toFixed(1)} s, ${inFlight} leased in ${lease.seconds().toFixed(1)} s; stopping`,
    );
    await filler.stop();

    const spawnedMs = monotonicMs();
    const broker = await context.startBroker(filler.dataDir, flags);
    const listeningMs = monotonicMs() - spawnedMs;
    if (!(await receiveFirst(broker.address, 60_000)))
      throw new Error("restart: no Receive returned a message within 60 s");
    const readyMs = monotonicMs() - spawnedMs;
    const atReady = sampleProcess(broker.pid);
    const commits = await readCommitCounters(broker.metricsAddress);
    await sleep(settleMs);
    const settled = sampleProcess(broker.pid);
    const heapLoaded = await readHeapUsedBytes(broker.metricsAddress);
    await checkCounts(broker.address, stored, inFlight + 1);
    context.log(
      `restart: listening after ${Math.round(listeningMs)} ms, first message served after ${Math.round(readyMs)} ms`,
    );

    const bytesPerMessage = (settled.rssBytes - rssEmpty) / stored;
    const window = {
      seconds: readyMs / 1000,
      fsyncs: commits.batches,
      commits: commits.commits,
      // CPU time since spawn, over the time since spawn: the startup's CPU.
      brokerCpuPercent: (100 * atReady.cpuSeconds) / (readyMs / 1000),
      // So its µs per message is startup CPU per stored message.
      brokerCpuSeconds: atReady.cpuSeconds,
      brokerPeakRssMb: settled.peakRssBytes / 2 ** 20,
    };
    const row = resultOf("5 restart", stored, window, undefined, {
      readySeconds: readyMs / 1000,
      listeningSeconds: listeningMs / 1000,
      rssMbAfter: settled.rssBytes / 2 ** 20,
      rssMbEmpty: rssEmpty / 2 ** 20,
      bytesPerMessage,
      // The same difference in V8's used heap, where the index lives: RSS also
      // holds heap the load's garbage grew and the allocator has not returned.
      heapBytesPerMessage: (heapLoaded - heapEmpty) / stored,
      inFlight,
      fillPerSecond: stored / fillSeconds,
      "msg/s": "stored messages indexed per second of startup",
    });
    // One commit (the first Receive's lease) since the start: fsync rates say nothing here.
    const result = { ...row, fsyncsPerSecond: undefined, messagesPerFsync: undefined };
    const targetReadyMs = stored * targetReadyMsPerMessage;
    const rssCounts = stored >= targetRssFrom;
    const met =
      readyMs <= targetReadyMs &&
      bytesPerMessage <= targetBytesPerMessage &&
      (!rssCounts || settled.rssBytes <= targetRssBytes);
    const text = `ready <= ${targetReadyMs / 1000} s, <= ${targetBytesPerMessage} B per message${rssCounts ? ", RSS <= 2.5 GiB" : ""}`;
    return [{ ...result, target: { text, met } }];
  },
};

/** Creates the queue with room for the in-flight quarter (max_in_flight defaults to 120,000). */
async function createBenchQueue(address: string, inFlight: number): Promise<void> {
  const rpc = createQueueServiceRpc(address);
  try {
    await rpc.createQueue({ name: queue, config: { maxInFlight: Math.max(120_000, inFlight + 1) } });
  } finally {
    rpc.close();
  }
}

/**
 * Receives (max 1, wait 0) on a new channel until a Receive returns a
 * message or, after the first, `forMs` have passed; whether one did.
 */
async function receiveFirst(address: string, forMs: number): Promise<boolean> {
  const rpc = createQueueServiceRpc(address);
  const untilMs = monotonicMs() + forMs;
  try {
    do {
      const { messages } = await rpc.receive({
        queue,
        maxMessages: 1,
        waitTime: durationFromMs(0),
        visibilityTimeout: durationFromMs(inFlightLeaseMs),
      });
      if (messages.length > 0) return true;
    } while (monotonicMs() < untilMs);
    return false;
  } finally {
    rpc.close();
  }
}

/** Checks that the restarted broker holds every message, with the leases it was stopped with. */
async function checkCounts(address: string, stored: number, inFlight: number): Promise<void> {
  const rpc = createQueueServiceRpc(address);
  try {
    const { queue: info } = await rpc.getQueue({ name: queue });
    const visible = Number(info?.stats?.visible);
    const leased = Number(info?.stats?.inFlight);
    if (visible + leased !== stored || leased !== inFlight) {
      throw new Error(
        `restart: the restarted broker holds ${visible} visible and ${leased} in flight, not ${stored - inFlight} and ${inFlight}`,
      );
    }
  } finally {
    rpc.close();
  }
}

/** V8's used heap, from the broker's default Node.js metrics (nodejs_heap_size_used_bytes). */
async function readHeapUsedBytes(metricsAddress: string): Promise<number> {
  return requireValue(await scrapeBroker(metricsAddress), "nodejs_heap_size_used_bytes");
}
