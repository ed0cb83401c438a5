/**
 * What AWS answered about queues, as LocalStack recorded it
 * (tests/aws/services/sqs/test_sqs.snapshot.json): the attributes of new
 * queues, the encryption attributes, and tags. `knownDifferences` names the
 * rows holdshelf answers otherwise today, by issue #35's item.
 */

/** GetQueueAttributes(All) of a queue created without attributes (test_set_queue_attributes_default_values). */
export const standardQueueDefaults: Readonly<Record<string, string>> = {
  ApproximateNumberOfMessages: "0",
  ApproximateNumberOfMessagesDelayed: "0",
  ApproximateNumberOfMessagesNotVisible: "0",
  DelaySeconds: "0",
  MaximumMessageSize: "1048576",
  MessageRetentionPeriod: "345600",
  ReceiveMessageWaitTimeSeconds: "0",
  SqsManagedSseEnabled: "true",
  VisibilityTimeout: "30",
};

/**
 * GetQueueAttributes(All) of a FIFO queue created with only
 * ContentBasedDeduplication (test_fifo_set_content_based_deduplication_strategy).
 */
export const fifoQueueDefaults: Readonly<Record<string, string>> = {
  ...standardQueueDefaults,
  ContentBasedDeduplication: "true",
  DeduplicationScope: "queue",
  FifoQueue: "true",
  FifoThroughputLimit: "perQueue",
};

/** Attributes "All" also returns, whose values are the queue's own (an ARN, epoch seconds). */
export const queueOwnAttributes = ["CreatedTimestamp", "LastModifiedTimestamp", "QueueArn"] as const;

/** The encryption attributes after each SetQueueAttributes (test_sse_queue_attributes). */
export const encryptionChanges: readonly {
  readonly set: Readonly<Record<string, string>>;
  readonly reads: Readonly<Record<string, string>>;
}[] = [
  {
    set: { KmsMasterKeyId: "testKeyId", KmsDataKeyReusePeriodSeconds: "6000" },
    reads: { KmsDataKeyReusePeriodSeconds: "6000", KmsMasterKeyId: "testKeyId", SqsManagedSseEnabled: "false" },
  },
  { set: { SqsManagedSseEnabled: "true" }, reads: { SqsManagedSseEnabled: "true" } },
];

/** TagQueue, then two UntagQueues, and ListQueueTags after each (test_tag_untag_queue); undefined: no Tags member. */
export const tagSteps: readonly {
  readonly tag?: Readonly<Record<string, string>>;
  readonly untag?: readonly string[];
  readonly lists: Readonly<Record<string, string>> | undefined;
}[] = [
  { tag: { tag1: "value1", tag2: "value2", tag3: "" }, lists: { tag1: "value1", tag2: "value2", tag3: "" } },
  { untag: ["tag1", "tag3"], lists: { tag2: "value2" } },
  { untag: ["tag2"], lists: undefined },
];

/**
 * Rows above that holdshelf answers otherwise: the attribute, and the #35 item
 * that fixes it. None today; a new difference found goes here, and in
 * docs/sqs.md's differences table, until it is fixed.
 */
export const knownDifferences: Readonly<Record<string, number>> = {};
