/**
 * Scenario 14: what the admin console costs the broker. Scenario 1's load
 * (its pipeline and shape, imported) on brokers with `--console-listen off`
 * and on brokers with the console on, where the broker's events are teed
 * into the console's queue history (counted per queue, every queue sampled
 * every 10 s) and an operator's page is open: the queue list and the
 * queue's page polled every 5 s over the session cookie, as the page does.
 *
 * Four rows, each on a fresh broker process from an empty store, in the
 * order off, on, on, off: two pairs whose drifts from the machine's load
 * run opposite ways, each on row compared with the off row of its pair.
 */
import { oneMinuteLoad } from "../machine-load.js";
import { measureBrokerCpuSplit } from "../broker-cpu-split.js";
import { startConsolePoller, type ConsolePoller } from "../console-poller.js";
import { createQueue, runPipeline } from "../pipeline.js";
import { percentiles, resultOf, type Scenario, type ScenarioContext, type ScenarioResult } from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const warmupMessages = 5_000;
const queue = "bench";
/** The rows' order: an on row's pair is the off row beside it (rows 1 and 2, rows 3 and 4). */
const order = [false, true, true, false] as const;

export const consoleOverhead: Scenario = {
  name: "console",
  sizeMeaning: "messages moved end to end, per row (four rows)",
  defaultSize: 200_000,
  async run(context) {
    const messages = context.size ?? this.defaultSize;
    const rows: ScenarioResult[] = [];
    for (const [index, consoleOn] of order.entries())
      rows.push(await measureRow(context, consoleOn, index + 1, messages));
    const micros = (row: ScenarioResult): number => row.brokerCpuMicrosPerMessage ?? NaN;
    const ratio = (on: number, off: number): number => Number((on / off).toFixed(3));
    const pairs = [
      { on: rows[1]!, off: rows[0]! },
      { on: rows[2]!, off: rows[3]! },
    ];
    const onTotal = pairs.reduce((sum, pair) => sum + micros(pair.on), 0);
    const offTotal = pairs.reduce((sum, pair) => sum + micros(pair.off), 0);
    return rows.map((row) => {
      const pair = pairs.find((candidate) => candidate.on === row);
      if (pair === undefined) return row;
      return {
        ...row,
        extra: {
          ...row.extra,
          brokerMicrosVsOff: ratio(micros(row), micros(pair.off)),
          rateVsOff: ratio(row.messagesPerSecond, pair.off.messagesPerSecond),
          // Both pairs together, on the last on row: the figure to quote.
          ...(row === pairs[1]!.on ? { brokerMicrosVsOffBothPairs: ratio(onTotal, offTotal) } : {}),
        },
      };
    });
  },
};

/** One row: a fresh broker (console on or off), a warm-up, the measured pipeline, the broker stopped. */
async function measureRow(
  context: ScenarioContext,
  consoleOn: boolean,
  row: number,
  messages: number,
): Promise<ScenarioResult> {
  const label = consoleOn ? "console on, page polled every 5 s" : "console off";
  const broker = await context.startBroker(undefined, { console: consoleOn });
  let poller: ConsolePoller | undefined;
  try {
    await createQueue(broker.address, queue);
    // The page is open from before the warm-up, so the console's first answers (and their compiling) are not in the window.
    if (consoleOn) poller = await startConsolePoller(broker.consoleUrl!, queue);
    context.log(`console: row ${row}, ${label}: warm-up of ${warmupMessages} messages`);
    await runPipeline(broker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
    const loadBefore = oneMinuteLoad();
    context.log(`console: row ${row}, ${label}: ${messages} messages (load ${loadBefore.toFixed(2)})`);
    const pollsBefore = poller?.polls();
    const {
      window,
      value: latencies,
      split,
    } = await measureBrokerCpuSplit(broker, messages, () =>
      runPipeline(broker.address, { queue, messages, ...batchedPipelineShape }),
    );
    const pollsAfter = poller === undefined ? undefined : await poller.stop();
    const polls =
      pollsBefore === undefined || pollsAfter === undefined
        ? {}
        : {
            consoleCalls: pollsAfter.answered - pollsBefore.answered,
            consoleCallsFailed: pollsAfter.failed - pollsBefore.failed,
          };
    return resultOf(`14 ${label} (row ${row}): scenario 1's load`, messages, window, percentiles(latencies), {
      ...split,
      loadBefore: Number(loadBefore.toFixed(2)),
      ...polls,
    });
  } finally {
    await poller?.stop();
    await broker.stop();
  }
}
