/**
 * Each field of a queue's configuration, as the broker and the TypeScript
 * client name it, and its name in the proto's QueueConfig: the update_mask
 * path that names it and the field a violation names. One table, so that
 * the client's masks, the service's reading of them and the broker's error
 * fields cannot disagree.
 */
export const queueConfigPathOf = {
  visibilityTimeoutMs: "visibility_timeout",
  delayMs: "delay",
  retentionMs: "retention",
  maxMessageBytes: "max_message_bytes",
  receiveWaitTimeMs: "receive_wait_time",
  maxInFlight: "max_in_flight",
  maxLeaseDurationMs: "max_lease_duration",
  redrivePolicy: "redrive_policy",
  retryPolicy: "retry_policy",
  tags: "tags",
  fifo: "fifo",
  contentBasedDeduplication: "content_based_deduplication",
  deduplicationScope: "deduplication_scope",
  accessPolicy: "access_policy",
  sqsEncryption: "sqs_encryption",
} as const;

/** A configuration field's name in the proto's QueueConfig: an update_mask path. */
export type QueueConfigPathName = (typeof queueConfigPathOf)[keyof typeof queueConfigPathOf];
