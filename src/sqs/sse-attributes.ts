import { clone, create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import {
  QueueConfigSchema,
  SqsEncryptionSchema,
  type QueueConfig,
  type SqsEncryption,
} from "../../gen/holdshelf/v1/queue_pb.js";
import { kmsDataKeyReusePeriodSeconds as reuseSeconds } from "../protocol/limits.js";
import { parseIntegerAttribute } from "./integer-attribute.js";
import { sqsErrors } from "./sqs-error.js";

/** The server-side encryption attributes, in the order GetQueueAttributes' "All" returns them. */
export const sseAttributeNames = ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"] as const;

/** Whether a name is one of the encryption attributes. */
export function isSseAttribute(name: string): boolean {
  return (sseAttributeNames as readonly string[]).includes(name);
}

/**
 * Applies the encryption attributes a request names to `config` (a copy the
 * caller owns), as SQS does: a KMS key turns SQS-managed encryption off,
 * SqsManagedSseEnabled=true removes the KMS key, and both in one request
 * are InvalidAttributeName. Kept and reported only: nothing is encrypted.
 */
export function applySseAttributes(config: QueueConfig, attributes: ReadonlyMap<string, string>): void {
  if (!sseAttributeNames.some((name) => attributes.has(name))) return;
  const current = effectiveEncryption(config);
  let { kmsMasterKeyId, sqsManagedSseEnabled } = current;
  let reuse =
    current.kmsDataKeyReusePeriod === undefined
      ? reuseSeconds.default
      : durationMs(current.kmsDataKeyReusePeriod) / 1000;
  const key = attributes.get("KmsMasterKeyId");
  const managed = attributes.get("SqsManagedSseEnabled");
  const period = attributes.get("KmsDataKeyReusePeriodSeconds");
  if (period !== undefined) reuse = parseReuse(period);
  if (managed !== undefined) sqsManagedSseEnabled = parseBoolean(managed);
  if (key !== undefined) {
    if (key !== "" && managed !== undefined && sqsManagedSseEnabled) {
      throw sqsErrors.invalidAttributeName(
        "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.",
      );
    }
    kmsMasterKeyId = key;
    if (key !== "") sqsManagedSseEnabled = false;
  } else if (sqsManagedSseEnabled) {
    kmsMasterKeyId = "";
  }
  config.sqsEncryption = create(SqsEncryptionSchema, {
    kmsMasterKeyId,
    kmsDataKeyReusePeriod: durationFromMs(reuse * 1000),
    sqsManagedSseEnabled,
  });
}

/** The encryption attributes as SQS reports them: the KMS ones only while a KMS key is set. */
export function sseAttributeValues(config: QueueConfig): Record<string, string> {
  const { kmsMasterKeyId, kmsDataKeyReusePeriod, sqsManagedSseEnabled } = effectiveEncryption(config);
  if (kmsMasterKeyId === "") return { SqsManagedSseEnabled: String(sqsManagedSseEnabled) };
  return {
    KmsMasterKeyId: kmsMasterKeyId,
    KmsDataKeyReusePeriodSeconds: String(
      kmsDataKeyReusePeriod === undefined ? reuseSeconds.default : durationMs(kmsDataKeyReusePeriod) / 1000,
    ),
    SqsManagedSseEnabled: String(sqsManagedSseEnabled),
  };
}

/** Whether a CreateQueue's encryption attribute differs from the queue's (an absent one is its default). */
export function sseAttributeDiffers(config: QueueConfig, name: string, value: string): boolean {
  const requested = clone(QueueConfigSchema, config);
  applySseAttributes(requested, new Map([[name, value]]));
  return JSON.stringify(sseAttributeValues(requested)) !== JSON.stringify(sseAttributeValues(config));
}

/** A queue's encryption settings, SQS-managed encryption (a new SQS queue's) when it has none. */
function effectiveEncryption(config: QueueConfig): SqsEncryption {
  return config.sqsEncryption ?? create(SqsEncryptionSchema, { kmsMasterKeyId: "", sqsManagedSseEnabled: true });
}

function parseReuse(value: string): number {
  return parseIntegerAttribute("KmsDataKeyReusePeriodSeconds", value, reuseSeconds.min, reuseSeconds.max);
}

function parseBoolean(value: string): boolean {
  const lower = value.toLowerCase();
  if (lower === "true" || lower === "false") return lower === "true";
  throw sqsErrors.invalidAttributeValue("Invalid value for the parameter SqsManagedSseEnabled.");
}
