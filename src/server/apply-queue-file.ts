import type { Logger } from "../logging/logger.js";
import { Code, reasonCodes, type Reason } from "../protocol/error-reasons.js";
import { brokerFailure } from "../service/broker-failure.js";
import type { QueueHandlers } from "../service/queue-calls.js";
import { applyQueues } from "./apply-queues.js";
import { localQueueAdmin } from "./local-queue-admin.js";
import type { QueueDefinition } from "./queue-definitions.js";

/** A parsed queue definitions file, and where it came from (for the log). */
export interface QueueDefinitionsFile {
  readonly source: string;
  readonly definitions: readonly QueueDefinition[];
}

// How long a broker waits between tries of its queue file while the cluster starts.
const retryMs = 500;

/**
 * Applies a queue definitions file through the handlers and logs what it
 * changed. A file that cannot be applied is refused before any change
 * (QueueDefinitionsError); any other failure (a queue's owner not yet
 * reachable while the cluster starts) is tried again, the apply being
 * idempotent, up to `attempts` times, unless `signal` aborts.
 */
export async function applyQueueFile(
  file: QueueDefinitionsFile,
  handlers: QueueHandlers,
  logger: Logger,
  attempts: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { changes, unchanged } = await applyQueues(localQueueAdmin(handlers), file.definitions, {
        dryRun: false,
        deleteMissing: false,
        prefix: "",
      });
      const named = (action: string) => changes.filter((change) => change.action === action).map((c) => c.queue);
      logger.info("queues applied", {
        source: file.source,
        created: named("create"),
        updated: named("update"),
        unchanged: unchanged.length,
      });
      return;
    } catch (error) {
      // Only a broker that is unavailable for now (a queue's owner still starting) is worth another try;
      // a stop asked for during the start (SIGTERM) ends the tries too.
      if (!isUnavailable(error) || attempt >= attempts || signal?.aborted === true)
        throw new Error(`${file.source}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      logger.warn("cannot apply the queues yet; trying again", { source: file.source, attempt, error });
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

/** Whether a call failed because its broker is unavailable for now (QUEUE_MOVING, STORAGE_UNAVAILABLE, SHUTTING_DOWN). */
function isUnavailable(error: unknown): boolean {
  const reason = brokerFailure(error)?.reason;
  return reason !== undefined && reason in reasonCodes && reasonCodes[reason as Reason] === Code.UNAVAILABLE;
}
