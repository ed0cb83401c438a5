import type { QueueRecord, StoredQueueConfig } from "./store.js";

/**
 * A copy of a queue record with exactly the stored fields, in the stored
 * order (the JSON layout's): whatever else the object passed in carries, such
 * as a field the rules added to their own configuration type, is not stored
 * until storage's types say so.
 */
export function storedQueueRecord(record: QueueRecord): QueueRecord {
  const { name, queueId, dataId, config, createTime } = record;
  return { name, queueId, dataId, config: storedQueueConfig(config), createTime };
}

function storedQueueConfig(config: StoredQueueConfig): StoredQueueConfig {
  const { redrivePolicy, retryPolicy } = config;
  return {
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    delayMs: config.delayMs,
    retentionMs: config.retentionMs,
    maxMessageBytes: config.maxMessageBytes,
    receiveWaitTimeMs: config.receiveWaitTimeMs,
    maxInFlight: config.maxInFlight,
    maxLeaseDurationMs: config.maxLeaseDurationMs,
    redrivePolicy: redrivePolicy && { deadLetterQueue: redrivePolicy.deadLetterQueue, maxReceiveCount: redrivePolicy.maxReceiveCount },
    retryPolicy: retryPolicy && { minBackoffMs: retryPolicy.minBackoffMs, maxBackoffMs: retryPolicy.maxBackoffMs },
  };
}
