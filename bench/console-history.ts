/**
 * Benchmark (not a test): what the console's queue history costs at the
 * broker's default limit of 10,000 queues, with its default shape (a sample
 * every 10 s, 60 kept).
 *
 * It opens a broker (in-memory store) with 10,000 queues and the history as
 * its events, fills the history with 60 samples, every queue sending,
 * receiving and deleting between samples (the history's event methods
 * called as the broker would), and reports the memory the history holds per
 * queue (V8 heap plus its typed arrays' buffers, after a GC), the time of
 * sample() over 30 more samples (the broker's allQueues() included, and
 * alone), of one event, and of the reads the console makes: processing()
 * and series() for one queue, the queue list's marks and rates for all.
 *
 * Run with `npx tsc -p bench/tsconfig.json && node --expose-gc dist-bench/bench/console-history.js`.
 *
 * Measured on a 2-vCPU AMD EPYC VM, Node 20.20, three runs, against what the
 * review measured of the history this replaced (an object per sample,
 * prom-client's registry read at every sample and every queue page):
 *   memory per queue   2,578-2,592 B            (was ~16 KB: ~160 MB at 10,000 queues)
 *   sample()           median 9-12 ms,          (was ~200-265 ms, 2.4 s worst)
 *                      max 13-25 ms over 30
 *     allQueues()      median 5.6-6.1 ms alone  (the broker's; the metrics scrape reads it too)
 *   an event           ~30 ns                   (new: on the broker's hot path, through the tee)
 *   processing()       ~2 us a call             (was 170-650 ms)
 *   series()           ~20 us a call
 *   queue list marks   22-32 ms for 10,000 queues (latestRates(30) and both marks each)
 */
import { performance } from "node:perf_hooks";
import { Broker } from "../src/broker/broker.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { QueueHistory, defaultHistoryShape } from "../src/console/queue-history.js";

const queueCount = 10_000;
const timedSamples = 30;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined)
  throw new Error("run node with --expose-gc: the memory figure needs a collection before each reading");

/** The memory a history can hold: V8's heap and the buffers of typed arrays (outside it). */
function heldBytes(): number {
  gc!();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function ms(value: number): string {
  return `${value.toFixed(value < 0.1 ? 4 : 2)} ms`;
}

// A real broker's queues, so that sample() is timed with the allQueues() it calls.
const history = new QueueHistory(defaultHistoryShape);
const broker = await Broker.open({ store: new MemoryStore(), events: history });
const names = Array.from({ length: queueCount }, (_, i) => `queue-${String(i).padStart(5, "0")}`);
for (const name of names) await broker.createQueue(name);
history.observe(broker);

/** What the broker would tell the history between two samples: some traffic on every queue. */
function traffic(round: number): void {
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    history.sent(name, 1 + ((i + round) % 5));
    history.delivered(name);
    history.deleted(name, 20 + ((i * 37 + round) % 5_000));
    if ((i + round) % 97 === 0) history.deadLettered(name, "dlq", 1);
  }
}

// The history is empty until it samples: what it holds after is its own.
const before = heldBytes();
const interval = defaultHistoryShape.sampleIntervalMs;
let now = 0;
for (let round = 0; round < defaultHistoryShape.samples; round++) {
  traffic(round);
  now += interval;
  history.sample(now);
}
const perQueue = (heldBytes() - before) / queueCount;

const sampleTimes: number[] = [];
const allQueuesTimes: number[] = [];
for (let round = 0; round < timedSamples; round++) {
  traffic(round);
  now += interval;
  let start = performance.now();
  history.sample(now);
  sampleTimes.push(performance.now() - start);
  start = performance.now();
  broker.allQueues();
  allQueuesTimes.push(performance.now() - start);
}
broker.close();

const time = (run: () => void, times = 1_000): number => {
  const start = performance.now();
  for (let i = 0; i < times; i++) run();
  return (performance.now() - start) / times;
};
// The history's share of the broker's hot path: one event each (a map lookup and an add).
const eventNs =
  time(() => {
    for (let i = 0; i < 1_000; i++) history.deleted(names[i]!, 120);
  }, 1_000) * 1_000;
const processingMs = time(() => history.processing(names[42]!, now));
const seriesMs = time(() => history.series(names[42]!));
const listMs = time(() => {
  for (const name of names) {
    history.latestSeries(name, 31);
    history.isDeadLettering(name);
    history.isOldestAgeGrowing(name);
  }
}, 10);

console.log(`queue history, ${queueCount} queues x ${defaultHistoryShape.samples} samples (Node ${process.version})`);
console.log(`  memory per queue     ${Math.round(perQueue)} B (heap + typed-array buffers, after GC)`);
console.log(
  `  sample()             median ${ms(median(sampleTimes))}, max ${ms(Math.max(...sampleTimes))} over ${timedSamples}`,
);
console.log(
  `    the broker's allQueues() alone: median ${ms(median(allQueuesTimes))}, max ${ms(Math.max(...allQueuesTimes))}`,
);
console.log(`  an event             ${eventNs.toFixed(0)} ns (deleted(): a count and a bucket)`);
console.log(`  processing()         ${ms(processingMs)} a call`);
console.log(`  series()             ${ms(seriesMs)} a call`);
console.log(`  queue list marks     ${ms(listMs)} for all ${queueCount} queues (latestRates(30) + both marks)`);
