import type { Queue, QueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { QueueDefinitionsError, type QueueDefinition } from "./queue-definitions.js";
import { planQueueChanges, type PlanOptions, type QueueChange } from "./queue-plan.js";

/** The calls `applyQueues` makes: over gRPC from the command, or in-process from a starting broker. */
export interface QueueAdmin {
  /** Every queue, all pages. */
  listQueues(): Promise<Queue[]>;
  getQueue(name: string): Promise<Queue>;
  /** Creates the queue; "exists" when a queue of that name exists with another configuration (QUEUE_ALREADY_EXISTS). */
  createQueue(name: string, config: QueueConfig): Promise<"created" | "exists">;
  /** Replaces the queue's whole configuration. */
  updateQueue(name: string, config: QueueConfig): Promise<void>;
  deleteQueue(name: string): Promise<void>;
}

/** How to apply a definitions file. */
export interface ApplyOptions extends PlanOptions {
  /** Plan and report, change nothing. */
  readonly dryRun: boolean;
}

/** What an apply did (or, in a dry run, would do). */
export interface ApplyOutcome {
  readonly changes: readonly QueueChange[];
  readonly unchanged: readonly string[];
}

/**
 * Makes the broker's queues match the definitions: plans every change from
 * one listing, refusing the whole file before the first change if any part
 * cannot be applied (planQueueChanges), then creates, updates and deletes in
 * dependency order. Idempotent: a second apply plans nothing. A queue another
 * apply created meanwhile (brokers of a cluster applying one file as they
 * start) is compared and updated instead.
 */
export async function applyQueues(
  admin: QueueAdmin,
  definitions: readonly QueueDefinition[],
  options: ApplyOptions,
): Promise<ApplyOutcome> {
  const plan = planQueueChanges(definitions, await admin.listQueues(), options);
  if (options.dryRun) return plan;
  for (const change of plan.changes) {
    switch (change.action) {
      case "create":
        if ((await admin.createQueue(change.queue, change.config)) === "exists") {
          const raced = await admin.getQueue(change.queue);
          if (raced.config?.fifo !== change.config.fifo) {
            throw new QueueDefinitionsError(
              `queue "${change.queue}" was created meanwhile with another FIFO-ness: FIFO-ness is fixed when a queue is created`,
            );
          }
          await admin.updateQueue(change.queue, change.config);
        }
        break;
      case "update":
        await admin.updateQueue(change.queue, change.config);
        break;
      case "delete":
        await admin.deleteQueue(change.queue);
        break;
    }
  }
  return plan;
}
