import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

const sseNames: QueueAttributeName[] = ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled"];

describe("SQS server-side encryption attributes through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    h = await startSqsHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  const sseOf = async (QueueUrl: string | undefined): Promise<Record<string, string> | undefined> =>
    (await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: sseNames }))).Attributes;

  it("reports a new queue as AWS's, with SQS-managed encryption, and keeps KMS settings as AWS's recordings show", async () => {
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "q" }));
    const all = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
    expect(all.Attributes).toMatchObject({ SqsManagedSseEnabled: "true" });
    expect(all.Attributes).not.toHaveProperty("KmsMasterKeyId");
    // A KMS key turns SQS-managed encryption off.
    await h.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: { KmsMasterKeyId: "testKeyId", KmsDataKeyReusePeriodSeconds: "6000" },
      }),
    );
    expect(await sseOf(QueueUrl)).toEqual({
      KmsMasterKeyId: "testKeyId",
      KmsDataKeyReusePeriodSeconds: "6000",
      SqsManagedSseEnabled: "false",
    });
    // Back to the defaults: no key, and the reuse period is shown only beside one.
    await h.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: { KmsMasterKeyId: "", KmsDataKeyReusePeriodSeconds: "300" },
      }),
    );
    expect(await sseOf(QueueUrl)).toEqual({ SqsManagedSseEnabled: "false" });
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { SqsManagedSseEnabled: "true" } }));
    expect(await sseOf(QueueUrl)).toEqual({ SqsManagedSseEnabled: "true" });
    // Other attributes leave them be.
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { SqsManagedSseEnabled: "false" } }));
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { VisibilityTimeout: "40" } }));
    expect(await sseOf(QueueUrl)).toEqual({ SqsManagedSseEnabled: "false" });
  });

  it("takes them at CreateQueue, compares them on a repeated CreateQueue, and gRPC shows them", async () => {
    const Attributes = { KmsMasterKeyId: "alias/aws/sqs", KmsDataKeyReusePeriodSeconds: "120" };
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes }));
    expect(await sseOf(QueueUrl)).toEqual({ ...Attributes, SqsManagedSseEnabled: "false" });
    await h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes }));
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { KmsDataKeyReusePeriodSeconds: "60" } })),
      "QueueAlreadyExists",
      400,
      /KmsDataKeyReusePeriodSeconds/,
    );
    expect((await h.rpc.getQueue({ name: "q" })).queue!.config!.sqsEncryption).toMatchObject({
      kmsMasterKeyId: "alias/aws/sqs",
      kmsDataKeyReusePeriod: { seconds: 120n },
      sqsManagedSseEnabled: false,
    });
    // A queue created with SQS's defaults named is the same as one created without them.
    await h.sqs.send(new CreateQueueCommand({ QueueName: "plain" }));
    await h.sqs.send(new CreateQueueCommand({ QueueName: "plain", Attributes: { SqsManagedSseEnabled: "true" } }));
  });

  it("refuses what AWS refuses: both kinds of encryption at once, and values out of range", async () => {
    const { QueueUrl } = await h.sqs.send(new CreateQueueCommand({ QueueName: "q" }));
    await expectSqsError(
      h.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl,
          Attributes: { KmsMasterKeyId: "testKeyId", SqsManagedSseEnabled: "true" },
        }),
      ),
      "InvalidAttributeName",
      400,
      /^You can use one type of server-side encryption \(SSE\) at one time\. You can either enable KMS SSE or SQS SSE\.$/,
    );
    for (const period of ["59", "86401", "five"]) {
      await expectSqsError(
        h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { KmsDataKeyReusePeriodSeconds: period } })),
        "InvalidAttributeValue",
        400,
        /KmsDataKeyReusePeriodSeconds/,
      );
    }
    await expectSqsError(
      h.sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { SqsManagedSseEnabled: "yes" } })),
      "InvalidAttributeValue",
      400,
      /SqsManagedSseEnabled/,
    );
    // Nothing changed.
    expect(await sseOf(QueueUrl)).toEqual({ SqsManagedSseEnabled: "true" });
  });
});
