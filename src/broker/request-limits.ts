import { HoldshelfError, invalidArgument } from "../errors/holdshelf-error.js";
import {
  maxAcks,
  maxAttributeKeyBytes,
  maxBatchEntries,
  maxCheckpointBytes,
  maxReceiveMessages,
  maxReceiveWaitMs,
  maxRenewals,
} from "../protocol/limits.js";
import { maxBackoffMs, type QueueConfig } from "./queue-config.js";
import type { TypedAttribute } from "../store/store.js";
import { checkTypedAttributes, typedAttributesSize } from "./typed-attributes.js";
import type { OutgoingMessage, ReceiveOptions } from "./types.js";

/**
 * Budget for the messages of one Receive response. A response must stay under
 * the 4 MiB that gRPC clients accept by default, so the budget leaves room
 * for the framing and the fixed fields of every message.
 */
export const receiveResponseBudgetBytes = 4 * 1024 * 1024 - 64 * 1024;
/** Room each message of a response takes besides its body and attributes: id, handle, times, field tags. */
export const perMessageOverheadBytes = 256;

/**
 * The message's size as max_message_bytes counts it: body, attribute keys
 * and values, and typed attributes' names, data types and values.
 */
export function messageSize(message: OutgoingMessage): number {
  let size = message.body.byteLength + typedAttributesSize(message.typedAttributes ?? {});
  for (const [key, value] of Object.entries(message.attributes ?? {})) {
    size += Buffer.byteLength(key, "utf8") + Buffer.byteLength(value, "utf8");
  }
  return size;
}

/**
 * Checks one message against its queue and returns its size, its delay and
 * its typed attributes as stored. `field` is the path of the message in the
 * request ("" or "entries[3].").
 */
export function checkOutgoing(
  message: OutgoingMessage,
  config: QueueConfig,
  field: string,
): { size: number; delayMs: number; typedAttributes: Record<string, TypedAttribute> } {
  const attributes = message.attributes ?? {};
  for (const key of Object.keys(attributes)) {
    const keyBytes = Buffer.byteLength(key, "utf8");
    if (keyBytes === 0 || keyBytes > maxAttributeKeyBytes) {
      throw invalidArgument(`${field}attributes`, `keys must be 1 to ${maxAttributeKeyBytes} bytes`);
    }
  }
  const typedAttributes = checkTypedAttributes(message.typedAttributes ?? {}, attributes, field);
  const size = messageSize(message);
  if (size > config.maxMessageBytes) {
    throw new HoldshelfError(
      "MESSAGE_TOO_LARGE",
      `${field || "message "}is ${size} bytes; the queue takes at most ${config.maxMessageBytes}`,
      {
        violations: [{ field: `${field}body`, description: `at most ${config.maxMessageBytes} bytes with attributes` }],
      },
    );
  }
  const delayMs = message.delayMs ?? config.delayMs;
  checkRange(delayMs, 0, config.retentionMs, `${field}delay`);
  return { size, delayMs, typedAttributes };
}

/** Checks a batch's entry count. */
export function checkBatchSize(count: number, field: string): void {
  if (count < 1 || count > maxBatchEntries) {
    throw invalidArgument(field, `must have 1 to ${maxBatchEntries} entries`);
  }
}

/** Checks a Heartbeat request's renewal count; too many ends the stream. */
export function checkRenewalCount(count: number): void {
  if (count > maxRenewals) throw invalidArgument("leases", `must have at most ${maxRenewals} renewals`);
}

/** Checks the number of acks in one Subscribe request. */
export function checkAckCount(count: number): void {
  if (count > maxAcks) throw invalidArgument("ack_receipt_handles", `must have at most ${maxAcks} acks`);
}

/** Checks a checkpoint's size. */
export function checkCheckpoint(checkpoint: Uint8Array): void {
  if (checkpoint.byteLength > maxCheckpointBytes) {
    throw invalidArgument("checkpoint", `must be at most ${maxCheckpointBytes} bytes`);
  }
}

/** A receive's options with defaults applied and bounds checked. */
export function resolveReceiveOptions(
  options: ReceiveOptions,
  config: QueueConfig,
): { maxMessages: number; visibilityTimeoutMs: number; waitTimeMs: number } {
  const maxMessages = options.maxMessages || 1;
  checkRange(maxMessages, 1, maxReceiveMessages, "max_messages");
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? config.visibilityTimeoutMs;
  checkVisibilityTimeout(visibilityTimeoutMs, config);
  const waitTimeMs = options.waitTimeMs ?? config.receiveWaitTimeMs;
  checkRange(waitTimeMs, 0, maxReceiveWaitMs, "wait_time");
  return { maxMessages, visibilityTimeoutMs, waitTimeMs };
}

/** Checks a visibility timeout against the queue's max_lease_duration. */
export function checkVisibilityTimeout(timeoutMs: number, config: QueueConfig): void {
  checkRange(timeoutMs, 0, config.maxLeaseDurationMs, "visibility_timeout");
}

/** A ChangeVisibility's timeout, which must be set, checked against the queue's max_lease_duration. */
export function requireVisibilityTimeout(timeoutMs: number | undefined, config: QueueConfig): number {
  if (timeoutMs === undefined) throw invalidArgument("visibility_timeout", "is required");
  checkVisibilityTimeout(timeoutMs, config);
  return timeoutMs;
}

/** Checks a RedriveMessages' bounds: how many messages (0: all) and how fast (0: no limit). */
export function checkRedriveBounds(maxMessages: number, maxPerSecond: number): void {
  if (!Number.isSafeInteger(maxMessages) || maxMessages < 0) {
    throw invalidArgument("max_messages", `must be 0 (all) to ${Number.MAX_SAFE_INTEGER}`);
  }
  if (!Number.isInteger(maxPerSecond) || maxPerSecond < 0)
    throw invalidArgument("max_per_second", "must not be negative");
}

/** Checks the wait a failed delivery asks before its retry: 0 to 12 h, as a retry policy's backoff. */
export function checkRetryDelay(delayMs: number): void {
  checkRange(delayMs, 0, maxBackoffMs, "visibility_timeout");
}

function checkRange(value: number, min: number, max: number, field: string): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(field, `must be between ${min} and ${max}${field === "max_messages" ? "" : " ms"}`);
  }
}
