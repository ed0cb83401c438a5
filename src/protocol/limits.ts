// The protocol's fixed limits: the same for every queue and every broker, so
// clients may rely on them (the proto's comments state them too). A request
// beyond one is refused with INVALID_ARGUMENT. Limits an operator sets (flags)
// or a queue sets (its configuration) are not here.

/** Entries in one SendBatch, DeleteBatch or ChangeVisibilityBatch. */
export const maxBatchEntries = 100;
/** Bodies, attributes and typed attributes of one SendBatch, in bytes. */
export const maxSendBatchBytes = 4 * 1024 * 1024;
/** The longest a Receive may wait (wait_time, or a queue's receive_wait_time), whatever the queue says, in ms. */
export const maxReceiveWaitMs = 20_000;
/** Messages of one Receive. */
export const maxReceiveMessages = 100;
/** Renewals in one Heartbeat or Subscribe request. */
export const maxRenewals = 1000;
/** Acks in one Subscribe request. */
export const maxAcks = 1000;
/** The largest credit a Subscribe stream may ask for (FlowControl.max_outstanding_messages). */
export const maxOutstandingMessages = 10_000;
/** Largest checkpoint a consumer may store with a message, in bytes. */
export const maxCheckpointBytes = 64 * 1024;
/** Longest attribute key, in UTF-8 bytes. */
export const maxAttributeKeyBytes = 256;
/** Longest data type of a typed attribute ("Number.int" and the like), in characters. */
export const maxDataTypeCharacters = 256;
/**
 * Longest trace header (SQS's AWSTraceHeader), in characters of printable
 * ASCII: an X-Ray header with a lineage is a few hundred; a hundred of them
 * fit the margin a receive response keeps beside its messages.
 */
export const maxTraceHeaderCharacters = 512;
/** Tags on one queue. */
export const maxQueueTags = 50;
/** Longest queue tag key, in characters; a key has at least one. */
export const maxTagKeyCharacters = 128;
/** Longest queue tag value, in characters; a value may be empty. */
export const maxTagValueCharacters = 256;
/** Longest SQS queue policy (a queue's access_policy), in UTF-8 bytes: Amazon SQS's own quota. */
export const maxAccessPolicyBytes = 8192;
/** Longest KMS key id a queue keeps (an ARN's longest), in characters. */
export const maxKmsKeyIdCharacters = 2048;
/** SQS's KmsDataKeyReusePeriodSeconds: its default and bounds, in seconds. */
export const kmsDataKeyReusePeriodSeconds = { default: 300, min: 60, max: 86_400 } as const;
