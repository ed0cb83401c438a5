import {
  createQueues,
  DEAD_LETTERS,
  JOBS,
  MAX_DELAY_MS,
  MAX_VISIBILITY_MS,
  MIN_VISIBILITY_MS,
  TASKS,
} from "./crash-queues.js";
import { drainQueues } from "./drain.js";
import { HeartbeatConsumer } from "./heartbeat-consumer.js";
import { checkInvariants, type CheckResult } from "./invariants.js";
import { runKillCycles, type CrashWorker, type KillCycleOptions } from "./kill-cycles.js";
import { grpcLeaseCalls } from "./lease-calls.js";
import { LeaseConsumer } from "./lease-consumer.js";
import { Ledger } from "./ledger.js";
import { grpcSendCalls, Producer } from "./producer.js";
import { SeededRandom } from "./seeded-random.js";
import { sqsLeaseCalls } from "./sqs-lease-calls.js";
import { sqsSendCalls } from "./sqs-send-calls.js";
import { SubscribeConsumer, type SubscribeHabits } from "./subscribe-consumer.js";
import { subscribeFigures, type SubscribeFigures } from "./subscribe-figures.js";
import { inProcessDialer } from "./subscribe-link.js";

/** What a crash run does: how long it goes on and how its kills are timed (drawn from the seed). */
export interface CrashRunOptions extends Omit<KillCycleOptions, "kills"> {
  readonly seed: number;
}

/** A crash run's figures and violations. */
export interface CrashReport extends CheckResult {
  readonly seed: number;
  readonly cycles: number;
  readonly wallSeconds: number;
  /** The target's own figures (a cluster's takeover times). */
  readonly target: Record<string, unknown>;
  readonly subscribe: SubscribeFigures;
}

/** How the Subscribe consumers treat what is pushed to them. */
const subscribeHabits: SubscribeHabits = {
  ack: 0.55,
  extend: 0.15,
  release: 0.1,
  fail: 0.12,
  abandon: 0.08,
  sparePoison: true,
};

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
  const workers: CrashWorker[] = [
    new Producer(ledger, random.fork(2), `${options.seed.toString(36)}a`, grpcSendCalls),
    new Producer(ledger, random.fork(7), `${options.seed.toString(36)}b`, grpcSendCalls),
    new LeaseConsumer(
      ledger,
      random.fork(3),
      JOBS,
      { deleteNow: 0.45, extend: 0.15, abandon: 0.1, release: 0.1, sparePoison: true },
      grpcLeaseCalls,
    ),
    new LeaseConsumer(
      ledger,
      random.fork(4),
      JOBS,
      { deleteNow: 0.6, extend: 0.1, abandon: 0.05, release: 0.05, sparePoison: true },
      grpcLeaseCalls,
    ),
    new LeaseConsumer(
      ledger,
      random.fork(5),
      DEAD_LETTERS,
      { deleteNow: 0.7, extend: 0.1, abandon: 0.05, release: 0.05, sparePoison: false },
      grpcLeaseCalls,
    ),
    new HeartbeatConsumer(ledger, random.fork(6)),
  ];
  // Subscribe consumers on both queues, in process. Not in the cluster run
  // for now: there (HOLDSHELF_CRASH_SEED=3950558505 replays it) leases these
  // consumers held were delivered again before their deadlines, and whether
  // the broker ended them early or the ledger misses a release by a break
  // (killBreaksStreams) is not yet known: see issue #33's note.
  // A third consumer, in a child process SIGKILLed in half the broker's lives
  // (leases of 4 to 8 s, SubscribeRelay), is out of both runs for now: in the
  // gRPC run too, its leases were delivered again before the deadlines the
  // ledger holds them to (seeds 1357370978 and 904913736), most likely a
  // release on disconnect by its kill that its ledger misses; see
  // docs/performance.md and issue #34's note. test/reliability/
  // subscribe-consumer-kill.test.ts checks a killed consumer's release.
  const killBreaksStreams = broker.passesStreams === true;
  const subscribers = killBreaksStreams
    ? []
    : [
        new SubscribeConsumer(ledger, random.fork(12), {
          queue: JOBS,
          habits: subscribeHabits,
          leaseMs: [MIN_VISIBILITY_MS, MAX_VISIBILITY_MS],
          dialer: inProcessDialer,
          killChance: 0,
          killBreaksStreams,
        }),
        new SubscribeConsumer(ledger, random.fork(13), {
          queue: TASKS,
          habits: subscribeHabits,
          leaseMs: [MIN_VISIBILITY_MS, MAX_VISIBILITY_MS],
          dialer: inProcessDialer,
          killChance: 0,
          killBreaksStreams,
        }),
      ];
  workers.push(...subscribers);
  // Where the broker serves SQS, a third producer and a third JOBS consumer
  // go through it; both share the queues with the gRPC workers, so messages
  // cross from one API to the other both ways.
  if (broker.sqsUrl !== undefined) {
    workers.push(
      new Producer(ledger, random.fork(8), `${options.seed.toString(36)}s`, sqsSendCalls),
      new LeaseConsumer(
        ledger,
        random.fork(9),
        JOBS,
        { deleteNow: 0.5, extend: 0.15, abandon: 0.05, release: 0.1, sparePoison: true },
        sqsLeaseCalls,
      ),
    );
  }
  const cycles = await runKillCycles({ ...options, kills }, ledger, {
    setUp: createQueues,
    workers,
    // Every lease and delay dates from before the last kill, so all have run out by then.
    finish: (epoch, lastKill) => drainQueues(epoch, ledger, lastKill + MAX_VISIBILITY_MS + MAX_DELAY_MS + 500),
  });
  const result = checkInvariants(ledger);
  return {
    ...result,
    seed: options.seed,
    cycles,
    wallSeconds: Math.round((Date.now() - started) / 1000),
    target: broker.figures?.() ?? {},
    subscribe: subscribeFigures(subscribers, ledger),
  };
}
