import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  QueueConfig as RulesQueueConfig,
  QueueConfigInput as RulesQueueConfigInput,
  DeduplicationScope as RulesDeduplicationScope,
  FifoSettings,
  QueueLimits,
  RedrivePolicy as RulesRedrivePolicy,
  RetryPolicy as RulesRetryPolicy,
} from "../../src/broker/queue-config.js";
import { defaultQueueLimits } from "../../src/broker/queue-config.js";
import type { OutgoingMessage, ReceiveOptions as RulesReceiveOptions } from "../../src/broker/types.js";
import type {
  QueueConfig as ClientQueueConfig,
  QueueConfigInput as ClientQueueConfigInput,
  DeduplicationScope as ClientDeduplicationScope,
  RedrivePolicy as ClientRedrivePolicy,
  RetryPolicy as ClientRetryPolicy,
  ReceiveOptions as ClientReceiveOptions,
  SendBatchEntry,
} from "../../src/client/types.js";
import type { SqsEncryption } from "../../src/broker/sqs-queue-settings.js";
import type { StoredFifoConfig, StoredQueueConfig } from "../../src/store/store.js";

// Some shapes are written down more than once on purpose: storage owns its
// persisted record (StoredQueueConfig), and the client may not import the
// rules (test/structure/client-imports.test.ts), so it has its own QueueConfig,
// OutgoingMessage (SendBatchEntry) and ReceiveOptions. These checks keep the
// copies from drifting apart. They are type-level: `npm run typecheck` (and
// so .ci/run) fails on a drift, before vitest runs; each row names the pair.

type ClientFifoSetting = "fifo" | "contentBasedDeduplication" | "deduplicationScope";
type ClientSqsSetting = "accessPolicy" | "sqsEncryption";
type ClientLimitKeys = Exclude<
  keyof ClientQueueConfig,
  "redrivePolicy" | "retryPolicy" | "tags" | ClientFifoSetting | ClientSqsSetting
>;
type StoredLimitKeys = Exclude<
  keyof StoredQueueConfig,
  "redrivePolicy" | "retryPolicy" | "tags" | "fifo" | ClientSqsSetting
>;

describe("the shapes written twice on purpose", () => {
  it("QueueConfig: the rules', the client's and storage's have the same numeric settings", () => {
    expectTypeOf<ClientLimitKeys>().toEqualTypeOf<keyof QueueLimits>();
    expectTypeOf<StoredLimitKeys>().toEqualTypeOf<keyof QueueLimits>();
    expectTypeOf<Exclude<keyof RulesQueueConfig, keyof QueueLimits>>().toEqualTypeOf<
      "redrivePolicy" | "retryPolicy" | "tags" | "fifo" | ClientSqsSetting
    >();
    // The same numeric settings at run time too: the rules' defaults name each one.
    const limitKeys: ClientLimitKeys[] = [
      "visibilityTimeoutMs",
      "delayMs",
      "retentionMs",
      "maxMessageBytes",
      "receiveWaitTimeMs",
      "maxInFlight",
      "maxLeaseDurationMs",
    ];
    expect(Object.keys(defaultQueueLimits).sort()).toEqual(limitKeys.sort());
  });

  it("QueueConfig: the policies, tags and FIFO settings agree", () => {
    expectTypeOf<ClientRedrivePolicy>().toEqualTypeOf<RulesRedrivePolicy>();
    expectTypeOf<ClientRetryPolicy>().toEqualTypeOf<RulesRetryPolicy>();
    expectTypeOf<NonNullable<StoredQueueConfig["redrivePolicy"]>>().toEqualTypeOf<RulesRedrivePolicy>();
    expectTypeOf<NonNullable<StoredQueueConfig["retryPolicy"]>>().toEqualTypeOf<RulesRetryPolicy>();
    expectTypeOf<ClientQueueConfig["tags"]>().toEqualTypeOf<RulesQueueConfig["tags"]>();
    expectTypeOf<StoredQueueConfig["tags"]>().toEqualTypeOf<RulesQueueConfig["tags"]>();
    expectTypeOf<ClientDeduplicationScope>().toEqualTypeOf<RulesDeduplicationScope>();
    expectTypeOf<StoredFifoConfig>().toEqualTypeOf<FifoSettings>();
    // The client flattens the rules' `fifo` settings into its own config.
    expectTypeOf<Exclude<ClientFifoSetting, "fifo">>().toEqualTypeOf<keyof FifoSettings>();
    expectTypeOf<ClientQueueConfig["accessPolicy"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NonNullable<ClientQueueConfig["sqsEncryption"]>>().toEqualTypeOf<SqsEncryption>();
    expectTypeOf<NonNullable<StoredQueueConfig["sqsEncryption"]>>().toEqualTypeOf<SqsEncryption>();
  });

  it("QueueConfigInput: the rules' and the client's take the same fields", () => {
    expectTypeOf<keyof ClientQueueConfigInput>().toEqualTypeOf<keyof RulesQueueConfigInput>();
  });

  it("OutgoingMessage: the rules' and the client's SendBatchEntry carry the same fields", () => {
    expectTypeOf<keyof SendBatchEntry>().toEqualTypeOf<keyof OutgoingMessage>();
    expectTypeOf<SendBatchEntry["delayMs"]>().toEqualTypeOf<OutgoingMessage["delayMs"]>();
    expectTypeOf<SendBatchEntry["messageGroupId"]>().toEqualTypeOf<OutgoingMessage["messageGroupId"]>();
    expectTypeOf<SendBatchEntry["deduplicationId"]>().toEqualTypeOf<OutgoingMessage["deduplicationId"]>();
    expectTypeOf<SendBatchEntry["traceHeader"]>().toEqualTypeOf<OutgoingMessage["traceHeader"]>();
  });

  it("ReceiveOptions: the rules' and the client's are the same", () => {
    expectTypeOf<ClientReceiveOptions>().toEqualTypeOf<RulesReceiveOptions>();
  });
});
