import { setTimeout as sleep } from "node:timers/promises";
import { createQueueServiceRpc } from "../../../src/client/rpc-client.js";
import type { CrashTarget } from "./crash-broker.js";
import type { Epoch } from "./crash-epoch.js";
import type { Ledger } from "./ledger.js";
import type { SeededRandom } from "./seeded-random.js";
import { createSqsEndpoint } from "./sqs-endpoint.js";

/** A client of the broker that works until the epoch's kill begins. */
export interface CrashWorker {
  run(epoch: Epoch): Promise<void>;
  /** Ends what outlives a life (a consumer's child process), at the end of the run. */
  close?(): Promise<void>;
}

/** What a crash run puts on the broker: the mixed workload (crash-run.ts) or the FIFO one (fifo-crash-run.ts). */
export interface CrashWorkload {
  /** Creates the queues, in the broker's first life. */
  setUp(epoch: Epoch): Promise<void>;
  /** Run side by side in every life but the last. */
  readonly workers: readonly CrashWorker[];
  /**
   * In the life after the last kill, which nothing ends: settles what is
   * left and drains the queues; `lastKill` is when the last life ended.
   * Returns what went wrong.
   */
  finish(epoch: Epoch, lastKill: number): Promise<string[]>;
}

/** How long a crash run goes on, and how the kills are timed. */
export interface KillCycleOptions {
  /** The broker (or cluster) killed and started again. */
  readonly target: CrashTarget;
  /** Kill cycles to run at least. */
  readonly cycles: number;
  /** If set, keeps killing until this much time has passed too. */
  readonly minutes?: number | undefined;
  /** How long the load runs before most kills: a uniform draw from this range, in ms (15% come 0 to 50 ms after the start). */
  readonly runMs: readonly [number, number];
  /** Draws the kill times. */
  readonly kills: SeededRandom;
  /** Progress lines. */
  readonly log: (line: string) => void;
}

/**
 * Starts the broker, runs the workload's workers, SIGKILLs it at a seeded
 * random moment and starts it again on the same data (or lets a cluster's
 * standby take over), cycle after cycle; then starts it once more for the
 * workload's finish. Every life is recorded in the ledger, and so are the
 * target's problems. Returns the number of cycles run.
 */
export async function runKillCycles(
  options: KillCycleOptions,
  ledger: Ledger,
  workload: CrashWorkload,
): Promise<number> {
  const started = Date.now();
  const broker = options.target;
  const endAt = options.minutes === undefined ? 0 : started + options.minutes * 60_000;
  let lastKill = Date.now();
  let cycle = 0;
  try {
    for (; cycle < options.cycles || Date.now() < endAt; cycle++) {
      const address = await broker.start();
      const sqsUrl = broker.sqsUrl?.();
      const epoch: Epoch = {
        address,
        rpc: createQueueServiceRpc(address),
        sqs: sqsUrl === undefined ? undefined : createSqsEndpoint(sqsUrl),
        killing: false,
      };
      const life = { started: Date.now(), killed: undefined as number | undefined };
      ledger.lives.push(life);
      if (cycle === 0) await workload.setUp(epoch);
      const running = workload.workers.map((worker) =>
        worker.run(epoch).catch((error: unknown) => {
          ledger.unexpected.push(`a worker failed: ${error instanceof Error ? error.stack : String(error)}`);
        }),
      );
      // Some kills land right after the start, while the broker is still
      // catching up on leases that ran out while it was down.
      const runMs = options.kills.chance(0.15)
        ? options.kills.int(0, 50)
        : options.kills.int(options.runMs[0], options.runMs[1]);
      await sleep(runMs);
      epoch.killing = true;
      life.killed = Date.now();
      await broker.kill();
      lastKill = Date.now();
      await Promise.all(running);
      epoch.rpc.close();
      epoch.sqs?.client.destroy();
      options.log(
        `cycle ${cycle + 1}: killed after ${runMs} ms; so far ${ledger.sends.length} sends, ` +
          `${ledger.deliveries.length} deliveries, ${ledger.unexpected.length} unexpected`,
      );
    }
    // The finish works over gRPC.
    const address = await broker.start();
    const epoch: Epoch = { address, rpc: createQueueServiceRpc(address), sqs: undefined, killing: false };
    ledger.lives.push({ started: Date.now(), killed: undefined });
    ledger.unexpected.push(...(await workload.finish(epoch, lastKill)));
    epoch.killing = true;
    epoch.rpc.close();
  } finally {
    // Also when something above threw: never leave a broker process (or a consumer's) behind.
    await Promise.all(workload.workers.map((worker) => worker.close?.()));
    await broker.stop();
  }
  ledger.unexpected.push(...broker.problems);
  return cycle;
}
