/**
 * Scenario 15: what FIFO queues cost against a standard queue. Scenario 1's
 * load (its pipeline and shape, imported: 4 producers SendBatch 100, 4
 * consumers Receive up to 100 + DeleteBatch) on a standard queue, and on a
 * FIFO queue whose sends spread their messages over 1,000 message groups,
 * or over 10, in turn, each message with a deduplication id of its own.
 *
 * Six rows, each on a fresh broker process from an empty store, in the
 * order standard, 1,000 groups, 10 groups, 10 groups, 1,000 groups,
 * standard: a FIFO row is compared with the standard row of its half
 * (rows 1–3, rows 4–6), and the second row of each kind gives both halves
 * together, whose three kinds sit at the same mean place in the run, so
 * that a drift of the machine's load weighs on them alike.
 */
import { measureBrokerCpuSplit } from "../broker-cpu-split.js";
import { createFifoReceiveTally, type FifoReceiveCounts, type FifoReceiveTally } from "../fifo-receive-tally.js";
import { spreadOverGroups } from "../fifo-group-spread.js";
import { oneMinuteLoad } from "../machine-load.js";
import { createQueue, runPipeline, type PipelineOptions } from "../pipeline.js";
import { percentiles, resultOf, type Scenario, type ScenarioContext, type ScenarioResult } from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const warmupMessages = 5_000;
/** The target: 1,000 groups move at least this share of the standard queue's msg/s. */
const targetRateRatio = 0.7;
/** The rows' groups, in order; undefined is the standard queue. */
const order = [undefined, 1_000, 10, 10, 1_000, undefined] as const;

export const fifoQueues: Scenario = {
  name: "fifo",
  sizeMeaning: "messages moved end to end, per row (six rows)",
  defaultSize: 200_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const rows: ScenarioResult[] = [];
    for (const [index, groups] of order.entries()) rows.push(await measureRow(context, groups, index + 1, messages));
    const standardOf = (index: number): ScenarioResult =>
      index < order.length / 2 ? rows[0]! : rows[order.length - 1]!;
    return rows.map((row, index) => {
      const groups = order[index];
      if (groups === undefined) return row;
      const standard = standardOf(index);
      const halves = compareBothHalves(rows, groups);
      const last = order.lastIndexOf(groups) === index;
      return {
        ...row,
        extra: {
          ...row.extra,
          rateVsStandard: ratio(row.messagesPerSecond, standard.messagesPerSecond),
          brokerMicrosVsStandard: ratio(micros(row), micros(standard)),
          // Both halves together, on the kind's last row: the figures to quote.
          ...(last ? { rateVsStandardBothHalves: halves.rate, brokerMicrosVsStandardBothHalves: halves.micros } : {}),
        },
        ...(last && groups === 1_000 ? { target: rateTarget(halves.rate) } : {}),
      };
    });
  },
};

/** One row: a fresh broker, its queue (standard, or FIFO over `groups` groups), a warm-up, the measured pipeline. */
async function measureRow(
  context: ScenarioContext,
  groups: number | undefined,
  row: number,
  messages: number,
): Promise<ScenarioResult> {
  const label = groups === undefined ? "standard queue" : `FIFO, ${groups.toLocaleString("en-US")} groups`;
  const queue = groups === undefined ? "bench" : "bench.fifo";
  const broker = await context.startBroker();
  try {
    await createQueue(broker.address, queue, groups === undefined ? undefined : { fifo: true });
    // A new spread (and so new deduplication ids) for each run: the warm-up's stay in the window.
    const options = (count: number, tally?: FifoReceiveTally): PipelineOptions => ({
      queue,
      messages: count,
      ...batchedPipelineShape,
      ...(groups === undefined ? {} : { fifoFields: spreadOverGroups(groups) }),
      ...(tally === undefined ? {} : { onReceive: tally.onReceive }),
    });
    context.log(`fifo: row ${row}, ${label}: warm-up of ${warmupMessages} messages`);
    await runPipeline(broker.address, options(warmupMessages));
    const loadBefore = oneMinuteLoad();
    context.log(`fifo: row ${row}, ${label}: ${messages} messages (load ${loadBefore.toFixed(2)})`);
    const tally = createFifoReceiveTally();
    const {
      window,
      value: latencies,
      split,
    } = await measureBrokerCpuSplit(broker, messages, () => runPipeline(broker.address, options(messages, tally)));
    return resultOf(`15 ${label} (row ${row}): scenario 1's load`, messages, window, percentiles(latencies), {
      ...split,
      loadBefore: Number(loadBefore.toFixed(2)),
      ...receiveFigures(tally.counts(), groups !== undefined),
    });
  } finally {
    await broker.stop();
  }
}

/** How the consumers' Receives went: messages per Receive and empty long polls; on a FIFO queue, groups per Receive and any group out of order. */
function receiveFigures(counts: FifoReceiveCounts, fifo: boolean): Record<string, number> {
  const { receives, emptyReceives, messages, groupSpans, outOfOrder } = counts;
  const perReceive = { messagesPerReceive: Number((messages / receives).toFixed(1)), emptyReceives };
  return fifo
    ? { ...perReceive, groupsPerReceive: Number((groupSpans / receives).toFixed(2)), outOfOrder }
    : perReceive;
}

/** The issue's target, on the second 1,000-group row: both halves' msg/s against the standard queue's. */
function rateTarget(rate: number): { text: string; met: boolean } {
  return {
    text: `>= ${targetRateRatio} × the standard queue's msg/s (both halves: ${rate})`,
    met: rate >= targetRateRatio,
  };
}

/** A kind's two rows against the two standard rows: msg/s (the same messages each, so the inverse of the time) and broker µs a message. */
function compareBothHalves(rows: readonly ScenarioResult[], groups: number): { rate: number; micros: number } {
  const ofKind = (kind: number | undefined): ScenarioResult[] => rows.filter((_, index) => order[index] === kind);
  const total = (of: ScenarioResult[], value: (row: ScenarioResult) => number): number =>
    of.reduce((sum, row) => sum + value(row), 0);
  const fifo = ofKind(groups);
  const standard = ofKind(undefined);
  return {
    rate: ratio(
      total(standard, (row) => row.seconds),
      total(fifo, (row) => row.seconds),
    ),
    micros: ratio(total(fifo, micros), total(standard, micros)),
  };
}

function micros(row: ScenarioResult): number {
  return row.brokerCpuMicrosPerMessage ?? NaN;
}

function ratio(value: number, against: number): number {
  return Number((value / against).toFixed(3));
}
