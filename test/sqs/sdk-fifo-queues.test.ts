import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeduplicationScope } from "../../gen/holdshelf/v1/queue_pb.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, testAccountId, type SqsHarness } from "./sqs-harness.js";

const arnOf = (queue: string): string => `arn:aws:sqs:us-east-1:${testAccountId}:${queue}`;
const redriveTo = (queue: string): string => JSON.stringify({ deadLetterTargetArn: arnOf(queue), maxReceiveCount: 3 });

describe("FIFO queues' attributes through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  beforeEach(async () => {
    h = await startSqsHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  const attributesOf = async (queue: string, names: string[] = ["All"]): Promise<Record<string, string> | undefined> =>
    (await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: h.urlOf(queue), AttributeNames: names as never })))
      .Attributes;
  const create = (QueueName: string, Attributes: Record<string, string> = {}) =>
    h.sqs.send(new CreateQueueCommand({ QueueName, Attributes }));
  const setAttributes = (queue: string, Attributes: Record<string, string>) =>
    h.sqs.send(new SetQueueAttributesCommand({ QueueUrl: h.urlOf(queue), Attributes }));

  it("creates a .fifo queue with FifoQueue=true: a FIFO queue over gRPC too, reporting its FIFO attributes", async () => {
    const { QueueUrl } = await create("orders.fifo", { FifoQueue: "true", VisibilityTimeout: "45" });
    expect(QueueUrl).toBe(h.urlOf("orders.fifo"));
    expect((await h.rpc.getQueue({ name: "orders.fifo" })).queue!.config).toMatchObject({
      fifo: true,
      contentBasedDeduplication: false,
    });
    expect(await attributesOf("orders.fifo")).toMatchObject({
      FifoQueue: "true",
      ContentBasedDeduplication: "false",
      DeduplicationScope: "queue",
      FifoThroughputLimit: "perQueue",
      VisibilityTimeout: "45",
    });
    expect(await attributesOf("orders.fifo", ["FifoQueue", "DeduplicationScope"])).toEqual({
      FifoQueue: "true",
      DeduplicationScope: "queue",
    });
    // Creating it again with the same attributes is its URL, as in SQS; another value is QueueAlreadyExists.
    expect((await create("orders.fifo", { FifoQueue: "true", VisibilityTimeout: "45" })).QueueUrl).toBe(
      h.urlOf("orders.fifo"),
    );
    await expectSqsError(
      create("orders.fifo", { FifoQueue: "true", ContentBasedDeduplication: "true" }),
      "QueueAlreadyExists",
      400,
      /ContentBasedDeduplication/,
    );
  });

  it("reports no FIFO attributes for a standard queue, as SQS does, and takes FifoQueue=false for one", async () => {
    await create("plain", { FifoQueue: "false" });
    expect((await h.rpc.getQueue({ name: "plain" })).queue!.config!.fifo).toBe(false);
    const all = await attributesOf("plain");
    for (const name of ["FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"])
      expect(all).not.toHaveProperty(name);
    expect(await attributesOf("plain", ["FifoQueue"])).toBeUndefined();
    expect((await create("plain", { FifoQueue: "false" })).QueueUrl).toBe(h.urlOf("plain"));
    await expectSqsError(create("plain", { FifoQueue: "true" }), "InvalidParameterValue", 400, /must end with \.fifo/);
  });

  it("creates a high-throughput FIFO queue: messageGroup scope and perMessageGroupId, which holdshelf reports from the scope", async () => {
    const attributes = {
      FifoQueue: "true",
      ContentBasedDeduplication: "true",
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
    };
    await create("fast.fifo", attributes);
    expect((await h.rpc.getQueue({ name: "fast.fifo" })).queue!.config).toMatchObject({
      contentBasedDeduplication: true,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    });
    expect(await attributesOf("fast.fifo")).toMatchObject(attributes);
    expect((await create("fast.fifo", attributes)).QueueUrl).toBe(h.urlOf("fast.fifo"));
    // perQueue with the messageGroup scope is allowed; holdshelf has no quota to keep it in, so it reports perMessageGroupId (docs/sqs.md).
    await create("scoped.fifo", {
      FifoQueue: "true",
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perQueue",
    });
    expect(await attributesOf("scoped.fifo", ["FifoThroughputLimit"])).toEqual({
      FifoThroughputLimit: "perMessageGroupId",
    });
    expect((await create("scoped.fifo", { FifoQueue: "true", FifoThroughputLimit: "perQueue" })).QueueUrl).toBe(
      h.urlOf("scoped.fifo"),
    );
  });

  it("refuses FIFO names and attributes as SQS does, creating nothing", async () => {
    await expectSqsError(create("jobs.fifo"), "InvalidParameterValue", 400, /Can only include alphanumeric characters/);
    await expectSqsError(
      create("jobs.fifo", { FifoQueue: "false" }),
      "InvalidParameterValue",
      400,
      /Can only include alphanumeric characters/,
    );
    await expectSqsError(
      create("jobs", { FifoQueue: "true" }),
      "InvalidParameterValue",
      400,
      /The name of a FIFO queue .* must end with \.fifo/,
    );
    await expectSqsError(
      create("bad name.fifo", { FifoQueue: "true" }),
      "InvalidParameterValue",
      400,
      /The name of a FIFO queue/,
    );
    await expectSqsError(
      create(`${"x".repeat(76)}.fifo`, { FifoQueue: "true" }),
      "InvalidParameterValue",
      400,
      /1 to 80 in length/,
    );
    await expectSqsError(create("jobs.fifo", { FifoQueue: "yes" }), "InvalidAttributeValue", 400, /FifoQueue/);
    await expectSqsError(
      create("jobs", { ContentBasedDeduplication: "true" }),
      "InvalidAttributeName",
      400,
      /ContentBasedDeduplication/,
    );
    await expectSqsError(
      create("jobs", { DeduplicationScope: "queue" }),
      "InvalidAttributeName",
      400,
      /DeduplicationScope/,
    );
    await expectSqsError(
      create("jobs", { FifoThroughputLimit: "perQueue" }),
      "InvalidAttributeName",
      400,
      /FifoThroughputLimit/,
    );
    await expectSqsError(
      create("jobs.fifo", { FifoQueue: "true", ContentBasedDeduplication: "on" }),
      "InvalidAttributeValue",
      400,
      /ContentBasedDeduplication/,
    );
    await expectSqsError(
      create("jobs.fifo", { FifoQueue: "true", DeduplicationScope: "group" }),
      "InvalidAttributeValue",
      400,
      /DeduplicationScope/,
    );
    await expectSqsError(
      create("jobs.fifo", { FifoQueue: "true", FifoThroughputLimit: "perGroup" }),
      "InvalidAttributeValue",
      400,
      /FifoThroughputLimit/,
    );
    await expectSqsError(
      create("jobs.fifo", { FifoQueue: "true", FifoThroughputLimit: "perMessageGroupId" }),
      "InvalidAttributeValue",
      400,
      /perMessageGroupId is allowed only when DeduplicationScope is messageGroup/,
    );
    expect((await h.rpc.listQueues({})).queues).toEqual([]);
  });

  it("sets ContentBasedDeduplication and DeduplicationScope, which take effect; FifoQueue cannot change", async () => {
    await create("jobs.fifo", { FifoQueue: "true" });
    const send = () =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: h.urlOf("jobs.fifo"), MessageBody: "b", MessageGroupId: "g" }));
    await expectSqsError(send(), "InvalidParameterValue", 400, /ContentBasedDeduplication/);
    await setAttributes("jobs.fifo", {
      ContentBasedDeduplication: "true",
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
    });
    expect(await attributesOf("jobs.fifo")).toMatchObject({
      ContentBasedDeduplication: "true",
      DeduplicationScope: "messageGroup",
      FifoThroughputLimit: "perMessageGroupId",
    });
    expect((await send()).MessageId).toBeTruthy();
    // Naming the type it has changes nothing; another is refused, and so is the whole request with it.
    await setAttributes("jobs.fifo", { FifoQueue: "true" });
    await expectSqsError(
      setAttributes("jobs.fifo", { VisibilityTimeout: "99", FifoQueue: "false" }),
      "InvalidAttributeValue",
      400,
      /^Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.$/,
    );
    await expectSqsError(
      setAttributes("jobs.fifo", { DeduplicationScope: "queue", FifoThroughputLimit: "perMessageGroupId" }),
      "InvalidAttributeValue",
      400,
      /perMessageGroupId/,
    );
    // Back to the queue scope: the throughput limit it reports follows.
    await setAttributes("jobs.fifo", { DeduplicationScope: "queue" });
    expect(await attributesOf("jobs.fifo", ["VisibilityTimeout", "FifoThroughputLimit"])).toEqual({
      VisibilityTimeout: "30",
      FifoThroughputLimit: "perQueue",
    });

    await create("plain");
    await expectSqsError(
      setAttributes("plain", { FifoQueue: "true" }),
      "InvalidAttributeName",
      400,
      /^Unknown Attribute FifoQueue.$/,
    );
    await expectSqsError(
      setAttributes("plain", { DeduplicationScope: "queue" }),
      "InvalidAttributeName",
      400,
      /^You can specify the DeduplicationScope only when FifoQueue is set to true.$/,
    );
    await expectSqsError(
      setAttributes("plain", { ContentBasedDeduplication: "false" }),
      "InvalidAttributeName",
      400,
      /^Unknown Attribute ContentBasedDeduplication.$/,
    );
    expect((await h.rpc.getQueue({ name: "plain" })).queue!.config!.fifo).toBe(false);
  });

  it("refuses a redrive policy to a queue of the other kind, at creation and after", async () => {
    await create("dlq.fifo", { FifoQueue: "true" });
    await create("dlq");
    await expectSqsError(
      create("work.fifo", { FifoQueue: "true", RedrivePolicy: redriveTo("dlq") }),
      "InvalidParameterValue",
      400,
      /parameter RedrivePolicy is invalid. Reason: the dead-letter queue must be a FIFO queue/,
    );
    await expectSqsError(
      create("work", { RedrivePolicy: redriveTo("dlq.fifo") }),
      "InvalidParameterValue",
      400,
      /RedrivePolicy .*must be a standard queue/,
    );
    await create("work.fifo", { FifoQueue: "true", RedrivePolicy: redriveTo("dlq.fifo") });
    await create("work", { RedrivePolicy: redriveTo("dlq") });
    await expectSqsError(
      setAttributes("work.fifo", { RedrivePolicy: redriveTo("dlq") }),
      "InvalidParameterValue",
      400,
      /must be a FIFO queue/,
    );
    await expectSqsError(
      setAttributes("work", { RedrivePolicy: redriveTo("dlq.fifo") }),
      "InvalidParameterValue",
      400,
      /must be a standard queue/,
    );
    expect(JSON.parse((await attributesOf("work.fifo", ["RedrivePolicy"]))!["RedrivePolicy"]!)).toEqual({
      deadLetterTargetArn: arnOf("dlq.fifo"),
      maxReceiveCount: 3,
    });
  });
});
