import type { CrashRunOptions } from "./crash-run.js";
import { FifoConsumer } from "./fifo-consumer.js";
import { drainFifoQueues } from "./fifo-drain.js";
import { checkFifoInvariants, type FifoCheckResult } from "./fifo-invariants.js";
import { FifoLedger } from "./fifo-ledger.js";
import { FifoProducer } from "./fifo-producer.js";
import { createFifoQueues, FIFO_MAX_VISIBILITY_MS, FIFO_QUEUES, ORDERS, PAYMENTS } from "./fifo-queues.js";
import { runKillCycles } from "./kill-cycles.js";
import { SeededRandom } from "./seeded-random.js";

/** A FIFO crash run's figures and violations. */
export interface FifoCrashReport extends FifoCheckResult {
  readonly seed: number;
  readonly cycles: number;
  readonly wallSeconds: number;
}

/** Groups per producer: 32 in all, enough that groups block and take turns, few enough that each gets a long history in a short run. */
const groupsPerProducer = 8;

/**
 * Runs the FIFO workload against a broker process, SIGKILLs it at seeded
 * random moments and restarts it on the same data, cycle after cycle: two
 * producers per FIFO queue (deduplication by id, and by content per group),
 * each retrying its unknown sends in the next life, and three consumers
 * on both queues. After the last restart the producers settle what was left
 * unknown, the queues are drained, and the checks (fifo-invariants.ts)
 * read the whole history.
 */
export async function runFifoCrashCycles(options: CrashRunOptions): Promise<FifoCrashReport> {
  const started = Date.now();
  const random = new SeededRandom(options.seed);
  const ledger = new FifoLedger();
  const label = options.seed.toString(36);
  // Two producers per queue, each with groups of its own: more sends in flight when a kill lands, so that
  // some were stored but never answered, and their retries must be deduplicated after the restart.
  const producers = [
    new FifoProducer(ledger, random.fork(2), `${label}o`, ORDERS, groupsPerProducer),
    new FifoProducer(ledger, random.fork(3), `${label}p`, PAYMENTS, groupsPerProducer),
    new FifoProducer(ledger, random.fork(4), `${label}q`, ORDERS, groupsPerProducer),
    new FifoProducer(ledger, random.fork(5), `${label}r`, PAYMENTS, groupsPerProducer),
  ];
  const cycles = await runKillCycles({ ...options, kills: random.fork(1) }, ledger, {
    setUp: createFifoQueues,
    workers: [...producers, ...[6, 7, 8].map((fork) => new FifoConsumer(ledger, random.fork(fork), FIFO_QUEUES))],
    async finish(epoch, lastKill) {
      for (const producer of producers) await producer.settle(epoch);
      // Every lease dates from before the last kill, so all have run out by then and no group is blocked.
      return drainFifoQueues(epoch, ledger, lastKill + FIFO_MAX_VISIBILITY_MS + 500);
    },
  });
  const counters = new Map(producers.flatMap((producer) => [...producer.counters()]));
  return {
    ...checkFifoInvariants(ledger, counters),
    seed: options.seed,
    cycles,
    wallSeconds: Math.round((Date.now() - started) / 1000),
  };
}
