import { queueConfigPathOf } from "../protocol/queue-config-paths.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs, durationMs, timestampDate, type Duration, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  MessageState,
  type EntryResult as WireEntryResult,
  type PeekedMessage as WirePeekedMessage,
  type ReceivedMessage as WireReceivedMessage,
  type TypedAttributeValue as WireTypedAttributeValue,
  type TypedAttributeValueSchema,
} from "../../gen/holdshelf/v1/message_pb.js";
import type { Queue as WireQueue, QueueConfigSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import {
  MessageMoveTaskStatus,
  type HeartbeatRequestSchema,
  type LeaseState as WireLeaseState,
  type MessageMoveTask as WireMessageMoveTask,
} from "../../gen/holdshelf/v1/queue_service_pb.js";
import { mapKeyPath } from "../protocol/update-mask-path.js";
import { fifoConfigFromWire, fifoConfigToWire, fifoFieldsFromWire, fifoSendToWire } from "./fifo-convert.js";
import { RpcError } from "./rpc-error.js";
import { sqsSettingsFromWire, sqsSettingsToWire } from "./sqs-settings-convert.js";
import type {
  EntryResult,
  HeartbeatRequest,
  LeaseState,
  MessageBody,
  MoveTask,
  MoveTaskStatus,
  PeekedMessage,
  Queue,
  QueueConfigField,
  QueueConfigInput,
  ReceivedMessage,
  SendBatchEntry,
  TypedAttribute,
  UpdateQueueOptions,
} from "./types.js";

const utf8 = new TextEncoder();

/** A body as bytes: strings are sent as UTF-8. */
export function bodyBytes(body: MessageBody): Uint8Array {
  return typeof body === "string" ? utf8.encode(body) : body;
}

/** A plain configuration as the wire's QueueConfig. */
export function queueConfigToWire(config: QueueConfigInput = {}): MessageInitShape<typeof QueueConfigSchema> {
  const duration = (ms: number | undefined): Duration | undefined =>
    ms === undefined ? undefined : durationFromMs(ms);
  return {
    visibilityTimeout: duration(config.visibilityTimeoutMs),
    delay: duration(config.delayMs),
    retention: duration(config.retentionMs),
    maxMessageBytes: config.maxMessageBytes ?? 0,
    receiveWaitTime: duration(config.receiveWaitTimeMs),
    maxInFlight: config.maxInFlight ?? 0,
    maxLeaseDuration: duration(config.maxLeaseDurationMs),
    tags: { ...config.tags },
    ...fifoConfigToWire(config),
    ...sqsSettingsToWire(config),
    ...(config.redrivePolicy === undefined
      ? {}
      : {
          redrivePolicy: {
            deadLetterQueue: config.redrivePolicy.deadLetterQueue,
            maxReceiveCount: config.redrivePolicy.maxReceiveCount,
          },
        }),
    ...(config.retryPolicy === undefined
      ? {}
      : {
          retryPolicy: {
            minBackoff: durationFromMs(config.retryPolicy.minBackoffMs),
            maxBackoff: durationFromMs(config.retryPolicy.maxBackoffMs),
          },
        }),
  };
}

/** Checked here: every field of QueueConfigInput has its update_mask path in the shared table. */
const updateMaskPathOf: { readonly [K in QueueConfigField]-?: string } = queueConfigPathOf;

/**
 * UpdateQueueOptions' fields and tagKeys as the wire's update_mask: none
 * without either, and an empty list refused (it would mean every field), as
 * is "tags" beside tag keys (the broker refuses the overlap too).
 */
export function updateMaskToWire({ fields, tagKeys }: UpdateQueueOptions): { paths: string[] } | undefined {
  if (fields === undefined && tagKeys === undefined) return undefined;
  if (fields?.length === 0) throw new RangeError("UpdateQueueOptions.fields must name at least one field");
  if (tagKeys?.length === 0) throw new RangeError("UpdateQueueOptions.tagKeys must name at least one tag");
  if (tagKeys !== undefined && fields?.includes("tags")) {
    throw new RangeError('UpdateQueueOptions.fields may not name "tags" beside tagKeys');
  }
  const fieldPaths = (fields ?? []).map((field) => {
    if (!Object.hasOwn(updateMaskPathOf, field))
      throw new RangeError(`${JSON.stringify(field)} is not a QueueConfigInput field`);
    return updateMaskPathOf[field];
  });
  return { paths: [...fieldPaths, ...(tagKeys ?? []).map((key) => mapKeyPath("tags", key))] };
}

/** A wire Queue as a plain object with milliseconds and Dates. */
export function queueFromWire(queue: WireQueue | undefined): Queue {
  const config = queue?.config;
  const stats = queue?.stats;
  return {
    name: queue?.name ?? "",
    config: {
      visibilityTimeoutMs: ms(config?.visibilityTimeout),
      delayMs: ms(config?.delay),
      retentionMs: ms(config?.retention),
      maxMessageBytes: config?.maxMessageBytes ?? 0,
      receiveWaitTimeMs: ms(config?.receiveWaitTime),
      maxInFlight: config?.maxInFlight ?? 0,
      maxLeaseDurationMs: ms(config?.maxLeaseDuration),
      tags: { ...config?.tags },
      ...fifoConfigFromWire(config),
      ...sqsSettingsFromWire(config),
      ...(config?.redrivePolicy === undefined
        ? {}
        : {
            redrivePolicy: {
              deadLetterQueue: config.redrivePolicy.deadLetterQueue,
              maxReceiveCount: config.redrivePolicy.maxReceiveCount,
            },
          }),
      ...(config?.retryPolicy === undefined
        ? {}
        : {
            retryPolicy: {
              minBackoffMs: ms(config.retryPolicy.minBackoff),
              maxBackoffMs: ms(config.retryPolicy.maxBackoff),
            },
          }),
    },
    stats: {
      visible: Number(stats?.visible ?? 0n),
      inFlight: Number(stats?.inFlight ?? 0n),
      delayed: Number(stats?.delayed ?? 0n),
      ...(stats?.oldestMessageAge === undefined ? {} : { oldestMessageAgeMs: ms(stats.oldestMessageAge) }),
    },
    createTime: date(queue?.createTime),
    // A server from before update times sends none: its configurations changed last, as far as anyone can tell, at creation.
    updateTime: date(queue?.updateTime ?? queue?.createTime),
    deadLetterSourceQueues: [...(queue?.deadLetterSourceQueues ?? [])],
  };
}

/** Typed attributes as the wire's TypedAttributeValues: a string value as string_value, bytes as binary_value. */
export function typedAttributesToWire(
  typed: Readonly<Record<string, TypedAttribute>> | undefined,
): Record<string, MessageInitShape<typeof TypedAttributeValueSchema>> {
  // fromEntries defines own properties: an attribute named "__proto__" stays an attribute.
  return Object.fromEntries(
    Object.entries(typed ?? {}).map(([name, { dataType, value }]) => [
      name,
      {
        dataType,
        value:
          typeof value === "string" ? { case: "stringValue" as const, value } : { case: "binaryValue" as const, value },
      },
    ]),
  );
}

/** The fields SendRequest and SendBatchEntry share, as the wire takes them. */
export interface WireSendFields {
  readonly body: Uint8Array;
  readonly attributes: Record<string, string>;
  readonly typedAttributes: Record<string, MessageInitShape<typeof TypedAttributeValueSchema>>;
  readonly delay?: Duration;
  readonly messageGroupId: string;
  readonly deduplicationId: string;
  readonly traceHeader: string;
}

/** A message to send as the wire's SendRequest fields (a queue aside) or SendBatchEntry. */
export function sendEntryToWire(entry: SendBatchEntry): WireSendFields {
  return {
    body: bodyBytes(entry.body),
    attributes: { ...entry.attributes },
    typedAttributes: typedAttributesToWire(entry.typedAttributes),
    ...(entry.delayMs === undefined ? {} : { delay: durationFromMs(entry.delayMs) }),
    ...fifoSendToWire(entry),
    traceHeader: entry.traceHeader ?? "",
  };
}

/** A wire ReceivedMessage as a plain object with Dates. */
export function messageFromWire(message: WireReceivedMessage): ReceivedMessage {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: message.attributes,
    typedAttributes: typedAttributesFromWire(message.typedAttributes),
    receiveCount: message.receiveCount,
    sendTime: date(message.sendTime),
    firstReceiveTime: date(message.firstReceiveTime),
    leaseDeadline: date(message.leaseDeadline),
    ...(message.checkpoint === undefined ? {} : { checkpoint: message.checkpoint }),
    // proto3 strings cannot be unset: empty ones mean the message was never dead-lettered.
    ...(message.deadLetterSourceQueue === "" && message.deadLetterReason === ""
      ? {}
      : { deadLetter: { sourceQueue: message.deadLetterSourceQueue, reason: message.deadLetterReason } }),
    ...(message.deadLetteredTime === undefined ? {} : { deadLetteredTime: timestampDate(message.deadLetteredTime) }),
    ...fifoFieldsFromWire(message),
    ...(message.traceHeader === "" ? {} : { traceHeader: message.traceHeader }),
  };
}

/** A wire PeekedMessage as a plain object with Dates. */
export function peekedMessageFromWire(message: WirePeekedMessage): PeekedMessage {
  return {
    messageId: message.messageId,
    body: message.body,
    attributes: message.attributes,
    typedAttributes: typedAttributesFromWire(message.typedAttributes),
    receiveCount: message.receiveCount,
    sendTime: date(message.sendTime),
    ...(message.firstReceiveTime === undefined ? {} : { firstReceiveTime: timestampDate(message.firstReceiveTime) }),
    state: MessageState[message.state] as PeekedMessage["state"],
    ...(message.leaseDeadline === undefined ? {} : { leaseDeadline: timestampDate(message.leaseDeadline) }),
    ...(message.visibleTime === undefined ? {} : { visibleTime: timestampDate(message.visibleTime) }),
    checkpointSize: message.checkpointSize,
    ...(message.deadLetterSourceQueue === "" && message.deadLetterReason === ""
      ? {}
      : { deadLetter: { sourceQueue: message.deadLetterSourceQueue, reason: message.deadLetterReason } }),
    ...(message.deadLetteredTime === undefined ? {} : { deadLetteredTime: timestampDate(message.deadLetteredTime) }),
    ...fifoFieldsFromWire(message),
    ...(message.traceHeader === "" ? {} : { traceHeader: message.traceHeader }),
  };
}

/** A wire EntryResult as a plain object: a failure becomes an RpcError. */
export function entryResultFromWire(result: WireEntryResult): EntryResult {
  return {
    receiptHandle: result.receiptHandle,
    ...(result.code === 0 ? {} : { error: new RpcError(result.code, result.reason, result.message) }),
    ...(result.leaseDeadline === undefined ? {} : { leaseDeadline: timestampDate(result.leaseDeadline) }),
  };
}

/** A plain Heartbeat request as the wire's. */
export function heartbeatRequestToWire(request: HeartbeatRequest): MessageInitShape<typeof HeartbeatRequestSchema> {
  return {
    queue: request.queue,
    releaseOnDisconnect: request.releaseOnDisconnect ?? false,
    leases: request.leases.map((lease) => ({
      receiptHandle: lease.receiptHandle,
      ...(lease.visibilityTimeoutMs === undefined
        ? {}
        : { visibilityTimeout: durationFromMs(lease.visibilityTimeoutMs) }),
      ...(lease.checkpoint === undefined ? {} : { checkpoint: lease.checkpoint }),
      ...(lease.failed === true ? { failed: true } : {}),
    })),
  };
}

/** A wire LeaseState as a plain object. */
export function leaseStateFromWire(state: WireLeaseState): LeaseState {
  return {
    receiptHandle: state.receiptHandle,
    held: state.held,
    reason: state.reason,
    ...(state.leaseDeadline === undefined ? {} : { leaseDeadline: timestampDate(state.leaseDeadline) }),
  };
}

// A value whose oneof a server left unset (none does) reads as an empty string, as proto3 reads a missing string.
function typedAttributesFromWire(
  typed: Readonly<Record<string, WireTypedAttributeValue>>,
): Record<string, TypedAttribute> {
  return Object.fromEntries(
    Object.entries(typed).map(([name, { dataType, value }]) => [name, { dataType, value: value.value ?? "" }]),
  );
}

function ms(duration: Duration | undefined): number {
  return duration === undefined ? 0 : durationMs(duration);
}

// The server always sets the times of a queue and a delivery; the epoch
// stands in only for a field a future server leaves out.
function date(timestamp: Timestamp | undefined): Date {
  return timestamp === undefined ? new Date(0) : timestampDate(timestamp);
}

/** A message move task from the wire. */
export function moveTaskFromWire(task: WireMessageMoveTask): MoveTask {
  return {
    ...(task.taskHandle === "" ? {} : { taskHandle: task.taskHandle }),
    status: MessageMoveTaskStatus[task.status] as MoveTaskStatus,
    sourceQueue: task.sourceQueue,
    destinationQueue: task.destinationQueue,
    maxPerSecond: task.maxPerSecond,
    movedCount: Number(task.movedCount),
    toMoveCount: Number(task.toMoveCount),
    failureReason: task.failureReason,
    startTime: task.startTime === undefined ? new Date(0) : timestampDate(task.startTime),
  };
}
