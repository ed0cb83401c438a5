import {
  DeduplicationScope as WireDeduplicationScope,
  type QueueConfig as WireQueueConfig,
} from "../../gen/holdshelf/v1/queue_pb.js";
import type {
  DeduplicationScope,
  FifoFields,
  QueueConfig,
  QueueConfigInput,
  SendOptions,
  SendResult,
} from "./types.js";

/** The FIFO settings of a plain configuration, as the wire's QueueConfig fields; none for a standard queue's. */
export function fifoConfigToWire(
  config: QueueConfigInput,
): Pick<WireQueueConfig, "fifo" | "contentBasedDeduplication" | "deduplicationScope"> {
  return {
    fifo: config.fifo ?? false,
    contentBasedDeduplication: config.contentBasedDeduplication ?? false,
    deduplicationScope: scopeToWire(config.deduplicationScope),
  };
}

/** A wire QueueConfig's FIFO settings, present only for a FIFO queue, so that a standard queue's config is as before FIFO queues. */
export function fifoConfigFromWire(
  config: WireQueueConfig | undefined,
): Pick<QueueConfig, "fifo" | "contentBasedDeduplication" | "deduplicationScope"> {
  if (config?.fifo !== true) return {};
  return {
    fifo: true,
    contentBasedDeduplication: config.contentBasedDeduplication,
    // UNSPECIFIED means QUEUE, the default a server fills in.
    deduplicationScope: config.deduplicationScope === WireDeduplicationScope.MESSAGE_GROUP ? "messageGroup" : "queue",
  };
}

/** A send's FIFO fields as the wire's (empty strings when unset, which the wire reads as unset). */
export function fifoSendToWire(options: SendOptions): { messageGroupId: string; deduplicationId: string } {
  return { messageGroupId: options.messageGroupId ?? "", deduplicationId: options.deduplicationId ?? "" };
}

/** A send's result: the sequence number only when the queue is FIFO (the wire's is empty otherwise). */
export function sendResult(messageId: string, sequenceNumber: string | undefined): SendResult {
  return sequenceNumber === undefined || sequenceNumber === "" ? { messageId } : { messageId, sequenceNumber };
}

/** A delivery's or a peek's FIFO fields: none for a standard queue's message, whose wire fields are empty. */
export function fifoFieldsFromWire(message: {
  messageGroupId: string;
  sequenceNumber: string;
  deduplicationId: string;
}): FifoFields {
  // Every FIFO message has a group; its deduplication id may be empty.
  if (message.messageGroupId === "") return {};
  return {
    messageGroupId: message.messageGroupId,
    sequenceNumber: message.sequenceNumber,
    deduplicationId: message.deduplicationId,
  };
}

function scopeToWire(scope: DeduplicationScope | undefined): WireDeduplicationScope {
  switch (scope) {
    case undefined:
      return WireDeduplicationScope.UNSPECIFIED;
    case "queue":
      return WireDeduplicationScope.QUEUE;
    case "messageGroup":
      return WireDeduplicationScope.MESSAGE_GROUP;
    default:
      // A caller without the types could pass anything: sent as unset, it would quietly mean "queue".
      throw new RangeError(`deduplicationScope must be "queue" or "messageGroup", not ${JSON.stringify(scope)}`);
  }
}
