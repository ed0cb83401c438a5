import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { callOptions, type Epoch } from "./crash-epoch.js";

/** Worked by consumers that delete, extend, hold and release; poison messages end in DEAD_LETTERS. */
export const JOBS = "jobs";
/** JOBS' dead-letter queue. */
export const DEAD_LETTERS = "jobs-dlq";
/** Worked by a consumer that keeps its leases alive on a Heartbeat stream. */
export const TASKS = "tasks";
/** Every queue, in the order the drain empties them (a source before its dead-letter queue). */
export const ALL_QUEUES = [JOBS, TASKS, DEAD_LETTERS] as const;
/** Deliveries of a JOBS message before it is dead-lettered. */
export const MAX_RECEIVE_COUNT = 2;
/**
 * Every lease the workload takes or renews lasts 1 to 3 s, so the drain waits
 * little; but the Subscribe consumer in a child process, whose 4 to 8 s
 * leases the drain polls out (crash-run.ts).
 */
export const MIN_VISIBILITY_MS = 1000;
export const MAX_VISIBILITY_MS = 3000;
/** The longest delay a Send asks for: 1 s, as SQS counts delays in whole seconds (sqs-send-calls.ts). */
export const MAX_DELAY_MS = 1000;

/** Creates the queues (idempotent, so it is safe on every start). */
export async function createQueues(epoch: Epoch): Promise<void> {
  const visibilityTimeout = durationFromMs(2000);
  await epoch.rpc.createQueue({ name: DEAD_LETTERS, config: { visibilityTimeout } }, callOptions());
  await epoch.rpc.createQueue({ name: TASKS, config: { visibilityTimeout } }, callOptions());
  await epoch.rpc.createQueue(
    {
      name: JOBS,
      config: {
        visibilityTimeout,
        redrivePolicy: { deadLetterQueue: DEAD_LETTERS, maxReceiveCount: MAX_RECEIVE_COUNT },
      },
    },
    callOptions(),
  );
}
