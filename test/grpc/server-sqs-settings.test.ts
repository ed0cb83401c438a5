// The Amazon SQS settings of QueueConfig over gRPC: access_policy (SQS's
// queue policy) and sqs_encryption (its server-side encryption attributes)
// are kept as given, survive a restart, change alone through an update_mask,
// and are refused with their field violations.
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqsEncryptionSchema } from "../../gen/holdshelf/v1/queue_pb.js";
import { expectRpcError } from "../support/expect-rpc-error.js";
import { startGrpcHarness, type GrpcHarness } from "../support/grpc-harness.js";

const policy = JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sqs:SendMessage" }] });
const kms = {
  kmsMasterKeyId: "alias/app",
  kmsDataKeyReusePeriod: durationFromMs(600_000),
  sqsManagedSseEnabled: false,
};

describe("a queue's SQS policy and encryption settings over gRPC", () => {
  let h: GrpcHarness;
  beforeEach(async () => {
    h = await startGrpcHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  it("keeps them as given through a restart, and an update_mask changes one alone", async () => {
    const created = (
      await h.rpc.createQueue({
        name: "q",
        config: { accessPolicy: policy, sqsEncryption: create(SqsEncryptionSchema, kms) },
      })
    ).queue!;
    expect(created.config).toMatchObject({ accessPolicy: policy, sqsEncryption: kms });
    await h.restart();
    expect((await h.rpc.getQueue({ name: "q" })).queue!.config).toMatchObject({
      accessPolicy: policy,
      sqsEncryption: kms,
    });
    // Only access_policy named: the encryption settings stay.
    const cleared = (
      await h.rpc.updateQueue({ name: "q", config: { accessPolicy: "" }, updateMask: { paths: ["access_policy"] } })
    ).queue!;
    expect(cleared.config!.accessPolicy).toBe("");
    expect(cleared.config!.sqsEncryption).toMatchObject(kms);
    // An unset reuse period is SQS's default, 300 s.
    const managed = (
      await h.rpc.updateQueue({
        name: "q",
        config: { sqsEncryption: { sqsManagedSseEnabled: true } },
        updateMask: { paths: ["sqs_encryption"] },
      })
    ).queue!;
    expect(managed.config!.sqsEncryption).toMatchObject({
      kmsMasterKeyId: "",
      kmsDataKeyReusePeriod: { seconds: 300n },
      sqsManagedSseEnabled: true,
    });
    // A queue created without them has neither.
    const plain = (await h.rpc.createQueue({ name: "plain" })).queue!;
    expect(plain.config!.accessPolicy).toBe("");
    expect(plain.config!.sqsEncryption).toBeUndefined();
  });

  it("refuses a policy that is not a JSON object or is over 8192 bytes, and encryption settings SQS refuses", async () => {
    const invalid = status.INVALID_ARGUMENT;
    for (const accessPolicy of ["{not json", "[]", "7", JSON.stringify({ Id: "x".repeat(8192) })]) {
      await expectRpcError(
        h.rpc.createQueue({ name: "q", config: { accessPolicy } }),
        invalid,
        "INVALID_ARGUMENT",
        "config.access_policy",
      );
    }
    await expectRpcError(
      h.rpc.createQueue({
        name: "q",
        config: { sqsEncryption: { kmsMasterKeyId: "alias/app", sqsManagedSseEnabled: true } },
      }),
      invalid,
      "INVALID_ARGUMENT",
      "config.sqs_encryption",
    );
    for (const ms of [59_000, 86_401_000, 60_500]) {
      await expectRpcError(
        h.rpc.createQueue({ name: "q", config: { sqsEncryption: { kmsDataKeyReusePeriod: durationFromMs(ms) } } }),
        invalid,
        "INVALID_ARGUMENT",
        "config.sqs_encryption.kms_data_key_reuse_period",
      );
    }
  });
});
