import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromMs, type Duration } from "@bufbuild/protobuf/wkt";
import {
  DeleteOutcome as WireDeleteOutcome,
  EntryResultSchema,
  TypedAttributeValueSchema,
  type EntryResult,
  type TypedAttributeValue,
} from "../../gen/holdshelf/v1/message_pb.js";
import {
  DeduplicationScope,
  QueueConfigSchema,
  QueueSchema,
  QueueStatsSchema,
  type Queue,
  type QueueConfig as WireQueueConfig,
} from "../../gen/holdshelf/v1/queue_pb.js";
import {
  MessageMoveTaskSchema,
  MessageMoveTaskStatus,
  type MessageMoveTask,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import type { QueueConfigInput } from "../broker/queue-config.js";
import type { DeleteOutcome, EntryOutcome, MoveTaskInfo, QueueInfo, TypedAttributeInput } from "../broker/types.js";
import { invalidArgument } from "../errors/holdshelf-error.js";
import type { TypedAttribute } from "../broker/types.js";
import { Code } from "../protocol/error-reasons.js";

// Durations past this many seconds (about 317 years) are refused rather
// than risk overflowing a millisecond count.
const maxDurationSeconds = 10_000_000_000n;

/**
 * A Duration as whole milliseconds; undefined when unset. A negative,
 * malformed or absurdly long duration is INVALID_ARGUMENT naming `field`.
 */
export function durationToMs(duration: Duration | undefined, field: string): number | undefined {
  if (duration === undefined) return undefined;
  const { seconds, nanos } = duration;
  if (nanos < -999_999_999 || nanos > 999_999_999 || (seconds > 0n && nanos < 0) || (seconds < 0n && nanos > 0)) {
    throw invalidArgument(field, "is not a valid duration");
  }
  if (seconds < 0n || nanos < 0) throw invalidArgument(field, "must not be negative");
  if (seconds > maxDurationSeconds) throw invalidArgument(field, "is too long");
  return Number(seconds) * 1000 + Math.floor(nanos / 1_000_000);
}

/** A wire QueueConfig as broker input: unset durations and zero numbers take defaults. */
export function queueConfigFromWire(config: WireQueueConfig | undefined): QueueConfigInput {
  const field = (name: string): string => `config.${name}`;
  return {
    visibilityTimeoutMs: durationToMs(config?.visibilityTimeout, field("visibility_timeout")),
    delayMs: durationToMs(config?.delay, field("delay")),
    retentionMs: durationToMs(config?.retention, field("retention")),
    maxMessageBytes: config?.maxMessageBytes || undefined,
    receiveWaitTimeMs: durationToMs(config?.receiveWaitTime, field("receive_wait_time")),
    maxInFlight: config?.maxInFlight || undefined,
    maxLeaseDurationMs: durationToMs(config?.maxLeaseDuration, field("max_lease_duration")),
    redrivePolicy: config?.redrivePolicy && {
      deadLetterQueue: config.redrivePolicy.deadLetterQueue,
      maxReceiveCount: config.redrivePolicy.maxReceiveCount,
    },
    retryPolicy: config?.retryPolicy && {
      minBackoffMs: durationToMs(config.retryPolicy.minBackoff, field("retry_policy.min_backoff")) ?? 0,
      maxBackoffMs: durationToMs(config.retryPolicy.maxBackoff, field("retry_policy.max_backoff")) ?? 0,
    },
    tags: config?.tags,
    fifo: config?.fifo,
    contentBasedDeduplication: config?.contentBasedDeduplication,
    deduplicationScope: deduplicationScopeFromWire(config?.deduplicationScope ?? DeduplicationScope.UNSPECIFIED),
    accessPolicy: config?.accessPolicy,
    sqsEncryption: config?.sqsEncryption && {
      kmsMasterKeyId: config.sqsEncryption.kmsMasterKeyId,
      kmsDataKeyReusePeriodMs: durationToMs(
        config.sqsEncryption.kmsDataKeyReusePeriod,
        field("sqs_encryption.kms_data_key_reuse_period"),
      ),
      sqsManagedSseEnabled: config.sqsEncryption.sqsManagedSseEnabled,
    },
  };
}

/** The broker's deduplication scope of a wire enum value; unset (UNSPECIFIED) is undefined, an unknown number INVALID_ARGUMENT. */
function deduplicationScopeFromWire(scope: DeduplicationScope): QueueConfigInput["deduplicationScope"] {
  switch (scope) {
    case DeduplicationScope.UNSPECIFIED:
      return undefined;
    case DeduplicationScope.QUEUE:
      return "queue";
    case DeduplicationScope.MESSAGE_GROUP:
      return "messageGroup";
    default:
      throw invalidArgument("config.deduplication_scope", `${scope} is not a DeduplicationScope`);
  }
}

/** Typed attributes from the wire for the broker: a value whose oneof is unset stays undefined, for the broker to refuse. */
export function typedAttributesFromWire(
  typed: Readonly<Record<string, TypedAttributeValue>>,
): Record<string, TypedAttributeInput> {
  // fromEntries defines own properties: an attribute named "__proto__" stays an attribute.
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [name, { dataType, value: value.value }]),
  );
}

/** Typed attributes in the oneof case their value's type says: text as string_value, bytes as binary_value. */
export function typedAttributesToWire(
  typed: Readonly<Record<string, TypedAttribute>>,
): Record<string, TypedAttributeValue> {
  // fromEntries defines own properties: an attribute named "__proto__" stays an attribute.
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [
      name,
      create(TypedAttributeValueSchema, {
        dataType,
        value: typeof value === "string" ? { case: "stringValue", value } : { case: "binaryValue", value },
      }),
    ]),
  );
}

/** A queue as the wire shows it. */
export function queueToWire(info: QueueInfo): Queue {
  const { config, counts } = info;
  return create(QueueSchema, {
    name: info.name,
    config: create(QueueConfigSchema, {
      visibilityTimeout: durationFromMs(config.visibilityTimeoutMs),
      delay: durationFromMs(config.delayMs),
      retention: durationFromMs(config.retentionMs),
      maxMessageBytes: config.maxMessageBytes,
      receiveWaitTime: durationFromMs(config.receiveWaitTimeMs),
      maxInFlight: config.maxInFlight,
      maxLeaseDuration: durationFromMs(config.maxLeaseDurationMs),
      tags: { ...config.tags },
      accessPolicy: config.accessPolicy ?? "",
      ...(config.sqsEncryption === undefined
        ? {}
        : {
            sqsEncryption: {
              kmsMasterKeyId: config.sqsEncryption.kmsMasterKeyId,
              kmsDataKeyReusePeriod: durationFromMs(config.sqsEncryption.kmsDataKeyReusePeriodMs),
              sqsManagedSseEnabled: config.sqsEncryption.sqsManagedSseEnabled,
            },
          }),
      ...(config.fifo === undefined
        ? {}
        : {
            fifo: true,
            contentBasedDeduplication: config.fifo.contentBasedDeduplication,
            deduplicationScope:
              config.fifo.deduplicationScope === "queue" ? DeduplicationScope.QUEUE : DeduplicationScope.MESSAGE_GROUP,
          }),
      ...(config.redrivePolicy === undefined ? {} : { redrivePolicy: { ...config.redrivePolicy } }),
      ...(config.retryPolicy === undefined
        ? {}
        : {
            retryPolicy: {
              minBackoff: durationFromMs(config.retryPolicy.minBackoffMs),
              maxBackoff: durationFromMs(config.retryPolicy.maxBackoffMs),
            },
          }),
    }),
    stats: create(QueueStatsSchema, {
      visible: BigInt(counts.visible),
      inFlight: BigInt(counts.inFlight),
      delayed: BigInt(counts.delayed),
      ...(info.oldestMessageAgeMs === undefined ? {} : { oldestMessageAge: durationFromMs(info.oldestMessageAgeMs) }),
    }),
    createTime: timestampFromMs(info.createTime),
    updateTime: timestampFromMs(info.updateTime),
    deadLetterSourceQueues: info.deadLetterSourceQueues,
  });
}

/** A batch entry's outcome as the wire shows it. */
export function outcomeToWire(outcome: EntryOutcome): EntryResult {
  const { error } = outcome;
  return create(EntryResultSchema, {
    receiptHandle: outcome.receiptHandle,
    code: error?.code ?? Code.OK,
    reason: error?.reason ?? "",
    message: error?.message ?? "",
    ...(outcome.leaseDeadline === undefined ? {} : { leaseDeadline: timestampFromMs(outcome.leaseDeadline) }),
    ...(outcome.deleteOutcome === undefined ? {} : { deleteOutcome: deleteOutcomeToWire(outcome.deleteOutcome) }),
  });
}

const wireDeleteOutcomes: Record<DeleteOutcome, WireDeleteOutcome> = {
  deleted: WireDeleteOutcome.DELETED,
  "already-deleted": WireDeleteOutcome.ALREADY_DELETED,
  "dead-lettered": WireDeleteOutcome.DEAD_LETTERED,
  "received-again": WireDeleteOutcome.RECEIVED_AGAIN,
  "no-longer-held": WireDeleteOutcome.NO_LONGER_HELD,
};

/** What a Delete did, as the wire says it. */
export function deleteOutcomeToWire(outcome: DeleteOutcome): WireDeleteOutcome {
  return wireDeleteOutcomes[outcome];
}

/** A message move task as the wire shows it. */
export function moveTaskToWire(task: MoveTaskInfo): MessageMoveTask {
  return create(MessageMoveTaskSchema, {
    taskHandle: task.taskHandle ?? "",
    status: MessageMoveTaskStatus[task.status],
    sourceQueue: task.sourceQueue,
    destinationQueue: task.destinationQueue,
    maxPerSecond: task.maxPerSecond,
    movedCount: BigInt(task.movedCount),
    toMoveCount: BigInt(task.toMoveCount),
    failureReason: task.failureReason,
    startTime: timestampFromMs(task.startTime),
  });
}
