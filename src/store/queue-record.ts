import type { QueueRecord, StoredMoveTask, StoredQueueConfig } from "./store.js";

/**
 * A copy of a queue record with exactly the stored fields, in the stored
 * order (the JSON layout's): whatever else the object passed in carries, such
 * as a field the rules added to their own configuration type, is not stored
 * until storage's types say so.
 */
export function storedQueueRecord(record: QueueRecord): QueueRecord {
  const { name, queueId, dataId, config, createTime, updateTime, moveTasks } = record;
  const stored = { name, queueId, dataId, config: storedQueueConfig(config), createTime, updateTime };
  // Left out when there are none, so records of queues that never had a task stay as they were.
  return moveTasks === undefined || moveTasks.length === 0
    ? stored
    : { ...stored, moveTasks: moveTasks.map(storedMoveTask) };
}

/**
 * A queue record as read back: fields added to the layout since the record
 * was written get the values that mean "as before", no tags, an update
 * time equal to the create time, no move tasks (an unset moveTasks) and a
 * standard queue (an unset config.fifo).
 */
export function upgradedQueueRecord(
  stored: Omit<QueueRecord, "updateTime" | "config"> & {
    readonly updateTime?: number;
    readonly config: Omit<StoredQueueConfig, "tags"> & { readonly tags?: Readonly<Record<string, string>> };
  },
): QueueRecord {
  const { config } = stored;
  return {
    ...stored,
    config: { ...config, tags: config.tags ?? {} },
    updateTime: stored.updateTime ?? stored.createTime,
  };
}

function storedQueueConfig(config: StoredQueueConfig): StoredQueueConfig {
  const { redrivePolicy, retryPolicy, fifo, accessPolicy, sqsEncryption } = config;
  const stored = {
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    delayMs: config.delayMs,
    retentionMs: config.retentionMs,
    maxMessageBytes: config.maxMessageBytes,
    receiveWaitTimeMs: config.receiveWaitTimeMs,
    maxInFlight: config.maxInFlight,
    maxLeaseDurationMs: config.maxLeaseDurationMs,
    redrivePolicy: redrivePolicy && {
      deadLetterQueue: redrivePolicy.deadLetterQueue,
      maxReceiveCount: redrivePolicy.maxReceiveCount,
    },
    retryPolicy: retryPolicy && { minBackoffMs: retryPolicy.minBackoffMs, maxBackoffMs: retryPolicy.maxBackoffMs },
    // fromEntries defines own properties: a tag named "__proto__" stays a tag.
    tags: Object.fromEntries(Object.entries(config.tags)),
  };
  // Each left out when unset, so that a record without them stays as it was before them.
  return {
    ...stored,
    ...(fifo === undefined
      ? {}
      : {
          fifo: {
            contentBasedDeduplication: fifo.contentBasedDeduplication,
            deduplicationScope: fifo.deduplicationScope,
          },
        }),
    ...(accessPolicy === undefined ? {} : { accessPolicy }),
    ...(sqsEncryption === undefined
      ? {}
      : {
          sqsEncryption: {
            kmsMasterKeyId: sqsEncryption.kmsMasterKeyId,
            kmsDataKeyReusePeriodMs: sqsEncryption.kmsDataKeyReusePeriodMs,
            sqsManagedSseEnabled: sqsEncryption.sqsManagedSseEnabled,
          },
        }),
  };
}

function storedMoveTask(task: StoredMoveTask): StoredMoveTask {
  const { taskId, status, destinationQueue, maxPerSecond, movedCount, toMoveCount, failureReason, startTime } = task;
  return { taskId, status, destinationQueue, maxPerSecond, movedCount, toMoveCount, failureReason, startTime };
}
