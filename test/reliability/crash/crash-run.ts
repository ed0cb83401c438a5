import { setTimeout as sleep } from "node:timers/promises";
import { createQueueServiceRpc } from "../../../src/client/rpc-client.js";
import type { CrashTarget } from "./crash-broker.js";
import type { Epoch } from "./crash-epoch.js";
import { createQueues, DEAD_LETTERS, JOBS, MAX_DELAY_MS, MAX_VISIBILITY_MS } from "./crash-queues.js";
import { drainQueues } from "./drain.js";
import { HeartbeatConsumer } from "./heartbeat-consumer.js";
import { checkInvariants, type CheckResult } from "./invariants.js";
import { grpcLeaseCalls } from "./lease-calls.js";
import { LeaseConsumer } from "./lease-consumer.js";
import { Ledger } from "./ledger.js";
import { grpcSendCalls, Producer } from "./producer.js";
import { SeededRandom } from "./seeded-random.js";
import { createSqsEndpoint } from "./sqs-endpoint.js";
import { sqsLeaseCalls } from "./sqs-lease-calls.js";
import { sqsSendCalls } from "./sqs-send-calls.js";

/** What a crash run does. */
export interface CrashRunOptions {
  /** The broker (or cluster) killed and started again. */
  readonly target: CrashTarget;
  readonly seed: number;
  /** Kill cycles to run at least. */
  readonly cycles: number;
  /** If set, keeps killing until this much time has passed too. */
  readonly minutes?: number | undefined;
  /** How long the load runs before most kills: a uniform draw from this range, in ms (15% come 0 to 50 ms after the start). */
  readonly runMs: readonly [number, number];
  /** Progress lines. */
  readonly log: (line: string) => void;
}

/** A crash run's figures and violations. */
export interface CrashReport extends CheckResult {
  readonly seed: number;
  readonly cycles: number;
  readonly wallSeconds: number;
  /** The target's own figures (a cluster's takeover times). */
  readonly target: Record<string, unknown>;
}

/**
 * Runs the mixed workload against a broker process, SIGKILLs it at seeded
 * random moments and restarts it on the same data (or lets a cluster's
 * standby take over), cycle after cycle; then starts it once more, drains
 * every queue and checks what the clients were told against what the
 * broker kept.
 */
export async function runCrashCycles(options: CrashRunOptions): Promise<CrashReport> {
  const started = Date.now();
  const random = new SeededRandom(options.seed);
  const kills = random.fork(1);
  const ledger = new Ledger();
  const broker = options.target;
  // Two producers: with sends overlapping, an answer given before its write
  // would have reached the log is caught within a short run (one is not enough).
  const workers = [
    new Producer(ledger, random.fork(2), `${options.seed.toString(36)}a`, grpcSendCalls),
    new Producer(ledger, random.fork(7), `${options.seed.toString(36)}b`, grpcSendCalls),
    new LeaseConsumer(ledger, random.fork(3), JOBS, { deleteNow: 0.45, extend: 0.15, abandon: 0.1, release: 0.1, sparePoison: true }, grpcLeaseCalls),
    new LeaseConsumer(ledger, random.fork(4), JOBS, { deleteNow: 0.6, extend: 0.1, abandon: 0.05, release: 0.05, sparePoison: true }, grpcLeaseCalls),
    new LeaseConsumer(ledger, random.fork(5), DEAD_LETTERS, { deleteNow: 0.7, extend: 0.1, abandon: 0.05, release: 0.05, sparePoison: false }, grpcLeaseCalls),
    new HeartbeatConsumer(ledger, random.fork(6)),
  ];
  // Where the broker serves SQS, a third producer and a third JOBS consumer
  // go through it; both share the queues with the gRPC workers, so messages
  // cross from one API to the other both ways.
  if (broker.sqsUrl !== undefined) {
    workers.push(
      new Producer(ledger, random.fork(8), `${options.seed.toString(36)}s`, sqsSendCalls),
      new LeaseConsumer(ledger, random.fork(9), JOBS, { deleteNow: 0.5, extend: 0.15, abandon: 0.05, release: 0.1, sparePoison: true }, sqsLeaseCalls),
    );
  }
  const endAt = options.minutes === undefined ? 0 : started + options.minutes * 60_000;
  let lastKill = Date.now();
  let cycle = 0;
  try {
    for (; cycle < options.cycles || Date.now() < endAt; cycle++) {
      const address = await broker.start();
      const sqsUrl = broker.sqsUrl?.();
      const epoch: Epoch = { rpc: createQueueServiceRpc(address), sqs: sqsUrl === undefined ? undefined : createSqsEndpoint(sqsUrl), killing: false };
      const life = { started: Date.now(), killed: undefined as number | undefined };
      ledger.lives.push(life);
      if (cycle === 0) await createQueues(epoch);
      const running = workers.map((worker) =>
        worker.run(epoch).catch((error: unknown) => {
          ledger.unexpected.push(`a worker failed: ${error instanceof Error ? error.stack : String(error)}`);
        }),
      );
      // Some kills land right after the start, while the broker is still
      // catching up on leases that ran out while it was down.
      const runMs = kills.chance(0.15) ? kills.int(0, 50) : kills.int(options.runMs[0], options.runMs[1]);
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
    // The drain works over gRPC.
    const epoch: Epoch = { rpc: createQueueServiceRpc(await broker.start()), sqs: undefined, killing: false };
    ledger.lives.push({ started: Date.now(), killed: undefined });
    // Every lease and delay dates from before the last kill, so all have run out by then.
    const problems = await drainQueues(epoch, ledger, lastKill + MAX_VISIBILITY_MS + MAX_DELAY_MS + 500);
    ledger.unexpected.push(...problems);
    epoch.killing = true;
    epoch.rpc.close();
  } finally {
    // Also when something above threw: never leave a broker process behind.
    await broker.stop();
  }
  ledger.unexpected.push(...broker.problems);
  const result = checkInvariants(ledger);
  return {
    ...result,
    seed: options.seed,
    cycles: cycle,
    wallSeconds: Math.round((Date.now() - started) / 1000),
    target: broker.figures?.() ?? {},
  };
}
