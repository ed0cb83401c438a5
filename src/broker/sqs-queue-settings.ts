import { invalidArgument } from "../errors/holdshelf-error.js";
import { isJsonObjectText } from "../protocol/json-object-text.js";
import { kmsDataKeyReusePeriodSeconds, maxAccessPolicyBytes, maxKmsKeyIdCharacters } from "../protocol/limits.js";

const second = 1000;

/**
 * Amazon SQS's server-side encryption attributes of a queue. The broker
 * keeps and shows them for infrastructure code that sets them; it never
 * encrypts with them.
 */
export interface SqsEncryption {
  /** Empty: no KMS key. */
  readonly kmsMasterKeyId: string;
  readonly kmsDataKeyReusePeriodMs: number;
  readonly sqsManagedSseEnabled: boolean;
}

/** The encryption settings as a request gives them: an undefined reuse period is SQS's default. */
export interface SqsEncryptionInput {
  readonly kmsMasterKeyId?: string | undefined;
  readonly kmsDataKeyReusePeriodMs?: number | undefined;
  readonly sqsManagedSseEnabled?: boolean | undefined;
}

/** KmsDataKeyReusePeriodSeconds' default and bounds in SQS, in ms. */
export const kmsDataKeyReusePeriodMs = {
  default: kmsDataKeyReusePeriodSeconds.default * second,
  min: kmsDataKeyReusePeriodSeconds.min * second,
  max: kmsDataKeyReusePeriodSeconds.max * second,
} as const;

/**
 * A queue policy from a request: empty is none (undefined); anything else
 * must be a JSON object of at most 8192 bytes, kept as given. Throws
 * INVALID_ARGUMENT naming `field`.
 */
export function checkAccessPolicy(policy: string | undefined, field: string): string | undefined {
  if (policy === undefined || policy === "") return undefined;
  if (Buffer.byteLength(policy, "utf8") > maxAccessPolicyBytes)
    throw invalidArgument(field, `must be at most ${maxAccessPolicyBytes} bytes`);
  if (!isJsonObjectText(policy)) throw invalidArgument(field, "must be a JSON object");
  return policy;
}

/**
 * Encryption settings from a request, checked as SQS checks them: the reuse
 * period is whole seconds from 60 to 86400, and a KMS key and SQS-managed
 * encryption exclude each other. Undefined stays undefined: the queue has
 * SQS-managed encryption, as a new SQS queue has. Throws INVALID_ARGUMENT
 * naming `field` or one of its fields.
 */
export function checkSqsEncryption(input: SqsEncryptionInput | undefined, field: string): SqsEncryption | undefined {
  if (input === undefined) return undefined;
  const kmsMasterKeyId = input.kmsMasterKeyId ?? "";
  const sqsManagedSseEnabled = input.sqsManagedSseEnabled ?? false;
  const reuse = input.kmsDataKeyReusePeriodMs ?? kmsDataKeyReusePeriodMs.default;
  if ([...kmsMasterKeyId].length > maxKmsKeyIdCharacters)
    throw invalidArgument(`${field}.kms_master_key_id`, `must be at most ${maxKmsKeyIdCharacters} characters`);
  if (!Number.isInteger(reuse / second) || reuse < kmsDataKeyReusePeriodMs.min || reuse > kmsDataKeyReusePeriodMs.max)
    throw invalidArgument(
      `${field}.kms_data_key_reuse_period`,
      `must be whole seconds between ${kmsDataKeyReusePeriodSeconds.min}s and ${kmsDataKeyReusePeriodSeconds.max}s`,
    );
  if (kmsMasterKeyId !== "" && sqsManagedSseEnabled)
    throw invalidArgument(field, "takes a KMS key or SQS-managed encryption, not both");
  return { kmsMasterKeyId, kmsDataKeyReusePeriodMs: reuse, sqsManagedSseEnabled };
}

/** Whether two queues' encryption settings are the same (undefined is SQS-managed encryption's default). */
export function sameSqsEncryption(a: SqsEncryption | undefined, b: SqsEncryption | undefined): boolean {
  return (
    a?.kmsMasterKeyId === b?.kmsMasterKeyId &&
    a?.kmsDataKeyReusePeriodMs === b?.kmsDataKeyReusePeriodMs &&
    a?.sqsManagedSseEnabled === b?.sqsManagedSseEnabled
  );
}
