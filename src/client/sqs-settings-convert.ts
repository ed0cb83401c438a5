import { durationFromMs, durationMs } from "@bufbuild/protobuf/wkt";
import { SqsEncryptionSchema, type QueueConfig as WireQueueConfig } from "../../gen/holdshelf/v1/queue_pb.js";
import { create } from "@bufbuild/protobuf";
import { kmsDataKeyReusePeriodSeconds } from "../protocol/limits.js";
import type { QueueConfig, QueueConfigInput } from "./types.js";

/** A configuration's Amazon SQS settings as the wire's QueueConfig fields; unset ones stay unset. */
export function sqsSettingsToWire(config: QueueConfigInput): Pick<WireQueueConfig, "accessPolicy" | "sqsEncryption"> {
  const encryption = config.sqsEncryption;
  return {
    accessPolicy: config.accessPolicy ?? "",
    sqsEncryption:
      encryption === undefined
        ? undefined
        : create(SqsEncryptionSchema, {
            kmsMasterKeyId: encryption.kmsMasterKeyId ?? "",
            sqsManagedSseEnabled: encryption.sqsManagedSseEnabled ?? false,
            ...(encryption.kmsDataKeyReusePeriodMs === undefined
              ? {}
              : { kmsDataKeyReusePeriod: durationFromMs(encryption.kmsDataKeyReusePeriodMs) }),
          }),
  };
}

/** A wire QueueConfig's Amazon SQS settings, present only when set, so that a queue without them reads as before them. */
export function sqsSettingsFromWire(
  config: WireQueueConfig | undefined,
): Pick<QueueConfig, "accessPolicy" | "sqsEncryption"> {
  const encryption = config?.sqsEncryption;
  return {
    ...(config === undefined || config.accessPolicy === "" ? {} : { accessPolicy: config.accessPolicy }),
    ...(encryption === undefined
      ? {}
      : {
          sqsEncryption: {
            kmsMasterKeyId: encryption.kmsMasterKeyId,
            // A server fills the default in; an unset one reads as it.
            kmsDataKeyReusePeriodMs:
              encryption.kmsDataKeyReusePeriod === undefined
                ? kmsDataKeyReusePeriodSeconds.default * 1000
                : durationMs(encryption.kmsDataKeyReusePeriod),
            sqsManagedSseEnabled: encryption.sqsManagedSseEnabled,
          },
        }),
  };
}
