/**
 * Scenario 6: churn. `size` send/receive/delete cycles (default 300,000,
 * to keep the default suite to minutes; the figure is
 * `--size 2000000`) through one queue, then scenario 1's workload again on
 * the same store: its rate as a fraction of the same workload's rate on the
 * fresh store, which deletes leave full of tombstones until LevelDB's
 * compaction drops them.
 *
 * How: on one broker, scenario 1's shape (4 producers SendBatch 100, 4
 * consumers Receive 100 and DeleteBatch): a warm-up, then `measuredMessages`
 * measured (fresh); the cycles, in the same shape; then `measuredMessages`
 * measured again (churned). The data directory's size is read before and
 * after the cycles.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createQueue, runPipeline } from "../pipeline.js";
import { monotonicMs } from "../proc-stats.js";
import {
  measureWindow,
  percentiles,
  resultOf,
  type BenchBroker,
  type Scenario,
  type ScenarioResult,
} from "../scenario.js";
import { batchedPipelineShape } from "./batched-pipeline.js";

const queue = "bench";
const warmupMessages = 5_000;
/** Messages of each measurement of scenario 1's workload, fresh and churned. */
const measuredMessages = 50_000;
/** Cycles per pipeline run, so that progress can be logged between runs. */
const cyclesPerRun = 100_000;
const targetRatio = 0.5;

export const churn: Scenario = {
  name: "churn",
  sizeMeaning: "send/receive/delete cycles (the issue's figure: 2000000)",
  defaultSize: 300_000,
  async run(context) {
    const cycles = context.size ?? this.defaultSize;
    const broker = await context.startBroker();
    await createQueue(broker.address, queue);
    await runPipeline(broker.address, { queue, messages: warmupMessages, ...batchedPipelineShape });
    context.log(`churn: ${measuredMessages} messages on the fresh store`);
    const fresh = await measure(broker);
    const dataDirBytesBefore = await directoryBytes(broker.dataDir);

    const startedMs = monotonicMs();
    for (let done = 0; done < cycles; ) {
      const messages = Math.min(cyclesPerRun, cycles - done);
      await runPipeline(broker.address, { queue, messages, ...batchedPipelineShape });
      done += messages;
      const seconds = (monotonicMs() - startedMs) / 1000;
      context.log(`churn: ${done} of ${cycles} cycles (${Math.round(done / seconds)}/s)`);
    }
    const churnSeconds = (monotonicMs() - startedMs) / 1000;
    const dataDirBytesAfter = await directoryBytes(broker.dataDir);

    context.log(`churn: ${measuredMessages} messages on the churned store`);
    const churned = await measure(broker);
    const ratio = churned.messagesPerSecond / fresh.messagesPerSecond;
    const result = {
      ...churned,
      scenario: "6 churn",
      extra: {
        freshRate: fresh.messagesPerSecond,
        ratio,
        cycles,
        cyclesPerSecond: cycles / churnSeconds,
        freshP99Ms: fresh.latencyMs?.p99 ?? NaN,
        dataDirMbBefore: dataDirBytesBefore / 2 ** 20,
        dataDirMbAfter: dataDirBytesAfter / 2 ** 20,
      },
    };
    return [{ ...result, target: { text: `churned >= ${targetRatio} × fresh rate`, met: ratio >= targetRatio } }];
  },
};

/** Scenario 1's workload, `measuredMessages` end to end, as a measured window. */
async function measure(broker: BenchBroker): Promise<ScenarioResult> {
  const { window, value: latencies } = await measureWindow(broker, () =>
    runPipeline(broker.address, { queue, messages: measuredMessages, ...batchedPipelineShape }),
  );
  return resultOf("churn", measuredMessages, window, percentiles(latencies));
}

/** The total size of the files under a directory (LevelDB's is flat, but do not assume). */
async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(path);
    // A file compaction removed between the listing and its stat counts as nothing.
    else if (entry.isFile())
      total += await stat(path).then(
        (info) => info.size,
        () => 0,
      );
  }
  return total;
}
