import { batchedPipeline } from "./scenarios/batched-pipeline.js";
import type { BenchBroker, ScenarioContext } from "./scenario.js";

/** holdshelf's rate on scenario 1's load, which a peer's row is compared with, and where it came from. */
export interface HoldshelfRate {
  readonly rate: number;
  readonly source: string;
}

/**
 * holdshelf's scenario 1 rate: from this run's scenario 1 if it ran earlier,
 * else by running scenario 1 now, with its broker stopped before the peer
 * starts so that the two never share the machine.
 */
export async function holdshelfRate(context: ScenarioContext, peer: string): Promise<HoldshelfRate> {
  const earlier = context.earlier.find((result) => result.scenario.startsWith("1 batched"));
  if (earlier !== undefined) return { rate: earlier.messagesPerSecond, source: "scenario 1 earlier in this run" };
  context.log(`${peer}: scenario 1 has not run; running it for holdshelf's rate`);
  const brokers: BenchBroker[] = [];
  const tracking: ScenarioContext = {
    ...context,
    async startBroker(dataDir) {
      const broker = await context.startBroker(dataDir);
      brokers.push(broker);
      return broker;
    },
  };
  const [result] = await batchedPipeline.run(tracking);
  // stop() is idempotent: the context's cleanup calling it again is harmless.
  for (const broker of brokers) await broker.stop();
  if (result === undefined) throw new Error("scenario 1 returned no result");
  return { rate: result.messagesPerSecond, source: `scenario 1 run by the ${peer} scenario` };
}
