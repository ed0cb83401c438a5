import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  PurgeQueueCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../support/fake-clock.js";
import { expectSqsError } from "./expect-sqs-error.js";
import { startSqsHarness, type SqsHarness } from "./sqs-harness.js";

describe("SQS queue actions through @aws-sdk/client-sqs", () => {
  let h: SqsHarness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startSqsHarness({ clock });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("creates a queue from attributes and tags, and gRPC sees the same queue", async () => {
    const { QueueUrl } = await h.sqs.send(
      new CreateQueueCommand({
        QueueName: "orders",
        Attributes: {
          VisibilityTimeout: "45",
          DelaySeconds: "3",
          MessageRetentionPeriod: "3600",
          MaximumMessageSize: "2048",
          ReceiveMessageWaitTimeSeconds: "7",
        },
        tags: { team: "billing" },
      }),
    );
    expect(QueueUrl).toBe(h.urlOf("orders"));
    const { queue } = await h.rpc.getQueue({ name: "orders" });
    expect(queue!.config).toMatchObject({
      visibilityTimeout: { seconds: 45n },
      delay: { seconds: 3n },
      retention: { seconds: 3600n },
      maxMessageBytes: 2048,
      receiveWaitTime: { seconds: 7n },
      tags: { team: "billing" },
    });
  });

  it("answers a repeated CreateQueue with the URL, and refuses one whose attributes differ (QueueAlreadyExists)", async () => {
    await h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { VisibilityTimeout: "60" } }));
    // Named attributes that match, or none at all: the existing queue.
    expect(
      (await h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { VisibilityTimeout: "60" } }))).QueueUrl,
    ).toBe(h.urlOf("q"));
    expect((await h.sqs.send(new CreateQueueCommand({ QueueName: "q" }))).QueueUrl).toBe(h.urlOf("q"));
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "q", Attributes: { VisibilityTimeout: "61" } })),
      "QueueAlreadyExists",
      400,
      /VisibilityTimeout/,
    );
  });

  it("refuses bad names and attributes with SQS's errors, creating nothing", async () => {
    await expectSqsError(h.sqs.send(new CreateQueueCommand({ QueueName: "has space" })), "InvalidParameterValue", 400);
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "x".repeat(81) })),
      "InvalidParameterValue",
      400,
    );
    // FIFO queues' names end in ".fifo", and only theirs (sdk-fifo-queues.test.ts has the rest).
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "jobs.fifo" })),
      "InvalidParameterValue",
      400,
      /Can only include/,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { FifoQueue: "true" } })),
      "InvalidParameterValue",
      400,
      /must end with \.fifo/,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { VisibilityTimeout: "43201" } })),
      "InvalidAttributeValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { DelaySeconds: "soon" } })),
      "InvalidAttributeValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { Bogus: "1" } as never })),
      "InvalidAttributeName",
      400,
      /Bogus/,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { QueueArn: "x" } })),
      "InvalidAttributeName",
      400,
      /read-only/,
    );
    await expectSqsError(
      h.sqs.send(new CreateQueueCommand({ QueueName: "a", Attributes: { RedriveAllowPolicy: "{}" } })),
      "InvalidAttributeName",
      400,
      /dead-letter queue/,
    );
    await expectSqsError(h.sqs.send(new CreateQueueCommand({} as never)), "MissingParameter", 400);
    expect((await h.rpc.listQueues({})).queues).toEqual([]);
  });

  it("finds queues by URL and lists them by prefix, paging only with MaxResults", async () => {
    for (const name of ["a-1", "a-2", "a-3", "b-1"]) await h.sqs.send(new CreateQueueCommand({ QueueName: name }));
    expect((await h.sqs.send(new GetQueueUrlCommand({ QueueName: "a-2" }))).QueueUrl).toBe(h.urlOf("a-2"));
    await expectSqsError(
      h.sqs.send(new GetQueueUrlCommand({ QueueName: "nope" })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new GetQueueUrlCommand({ QueueName: "a-2", QueueOwnerAWSAccountId: "111111111111" })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );

    const all = await h.sqs.send(new ListQueuesCommand({}));
    expect(all.QueueUrls).toEqual(["a-1", "a-2", "a-3", "b-1"].map(h.urlOf));
    expect(all.NextToken).toBeUndefined();
    const first = await h.sqs.send(new ListQueuesCommand({ QueueNamePrefix: "a-", MaxResults: 2 }));
    expect(first.QueueUrls).toEqual(["a-1", "a-2"].map(h.urlOf));
    const second = await h.sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: "a-", MaxResults: 2, NextToken: first.NextToken }),
    );
    expect(second.QueueUrls).toEqual([h.urlOf("a-3")]);
    expect(second.NextToken).toBeUndefined();
    await expectSqsError(h.sqs.send(new ListQueuesCommand({ MaxResults: 1001 })), "InvalidParameterValue", 400);
  });

  it("reports every attribute, with counts and timestamps, and only the names asked for", async () => {
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq" }));
    const createdAt = Math.floor(clock.now() / 1000);
    const url = (
      await h.sqs.send(
        new CreateQueueCommand({
          QueueName: "work",
          Attributes: {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:dlq",
              maxReceiveCount: "4",
            }),
          },
        }),
      )
    ).QueueUrl!;
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "now" }));
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 60 }));
    await h.rpc.receive({ queue: "work", maxMessages: 1 });
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "visible" }));
    clock.advance(5000);
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "40" } }));

    const { Attributes } = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }));
    expect(Attributes).toEqual({
      ApproximateNumberOfMessages: "1",
      ApproximateNumberOfMessagesNotVisible: "1",
      ApproximateNumberOfMessagesDelayed: "1",
      QueueArn: "arn:aws:sqs:us-east-1:000000000000:work",
      CreatedTimestamp: String(createdAt),
      LastModifiedTimestamp: String(createdAt + 5),
      VisibilityTimeout: "40",
      DelaySeconds: "0",
      MessageRetentionPeriod: "345600",
      MaximumMessageSize: "1048576",
      ReceiveMessageWaitTimeSeconds: "0",
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:dlq",
        maxReceiveCount: 4,
      }),
      // A new SQS queue's default (docs/sqs.md, "Queue policies and encryption at rest").
      SqsManagedSseEnabled: "true",
    });
    const some = await h.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["VisibilityTimeout", "QueueArn"] }),
    );
    expect(some.Attributes).toEqual({ VisibilityTimeout: "40", QueueArn: "arn:aws:sqs:us-east-1:000000000000:work" });
    expect((await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url }))).Attributes).toBeUndefined();
    await expectSqsError(
      h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["Nope" as never] })),
      "InvalidAttributeName",
      400,
    );
    await expectSqsError(
      h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: h.urlOf("gone") })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
    const sources = await h.sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: h.urlOf("dlq") }));
    expect(sources.queueUrls).toEqual([url]);
  });

  it("changes only the attributes named, keeping settings SQS does not have", async () => {
    await h.rpc.createQueue({
      name: "keep",
      config: { maxInFlight: 7, retryPolicy: { minBackoff: durationFromMs(1000), maxBackoff: durationFromMs(8000) } },
    });
    await h.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: h.urlOf("keep"),
        Attributes: { DelaySeconds: "9", ReceiveMessageWaitTimeSeconds: "20" },
      }),
    );
    const { queue } = await h.rpc.getQueue({ name: "keep" });
    expect(queue!.config).toMatchObject({
      maxInFlight: 7,
      delay: { seconds: 9n },
      receiveWaitTime: { seconds: 20n },
      retryPolicy: { minBackoff: { seconds: 1n } },
    });
    // An empty RedrivePolicy removes it, as in SQS.
    await h.sqs.send(new CreateQueueCommand({ QueueName: "dlq" }));
    const policy = JSON.stringify({
      deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:dlq",
      maxReceiveCount: 2,
    });
    await h.sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: h.urlOf("keep"), Attributes: { RedrivePolicy: policy } }),
    );
    expect((await h.rpc.getQueue({ name: "keep" })).queue!.config!.redrivePolicy).toMatchObject({
      deadLetterQueue: "dlq",
      maxReceiveCount: 2,
    });
    await h.sqs.send(new SetQueueAttributesCommand({ QueueUrl: h.urlOf("keep"), Attributes: { RedrivePolicy: "" } }));
    expect((await h.rpc.getQueue({ name: "keep" })).queue!.config!.redrivePolicy).toBeUndefined();
    await expectSqsError(
      h.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: h.urlOf("keep"),
          Attributes: {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:absent",
              maxReceiveCount: 2,
            }),
          },
        }),
      ),
      "InvalidParameterValue",
      400,
      /Dead letter target does not exist/,
    );
    await expectSqsError(
      h.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: h.urlOf("keep"), Attributes: { RedrivePolicy: "{not json" } }),
      ),
      "InvalidAttributeValue",
      400,
    );
    await expectSqsError(
      h.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: h.urlOf("keep"),
          Attributes: {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: "arn:aws:sqs:us-east-1:111111111111:dlq",
              maxReceiveCount: 2,
            }),
          },
        }),
      ),
      "InvalidParameterValue",
      400,
      /another account/,
    );
  });

  it("tags, untags and lists tags", async () => {
    await h.sqs.send(new CreateQueueCommand({ QueueName: "t", tags: { a: "1" } }));
    await h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("t"), Tags: { b: "2", a: "one" } }));
    expect((await h.sqs.send(new ListQueueTagsCommand({ QueueUrl: h.urlOf("t") }))).Tags).toEqual({ a: "one", b: "2" });
    await h.sqs.send(new UntagQueueCommand({ QueueUrl: h.urlOf("t"), TagKeys: ["a", "absent"] }));
    expect((await h.sqs.send(new ListQueueTagsCommand({ QueueUrl: h.urlOf("t") }))).Tags).toEqual({ b: "2" });
    await expectSqsError(
      h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("t"), Tags: {} })),
      "InvalidParameterValue",
      400,
    );
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    await expectSqsError(
      h.sqs.send(new TagQueueCommand({ QueueUrl: h.urlOf("t"), Tags: tooMany })),
      "InvalidParameterValue",
      400,
    );
    expect((await h.sqs.send(new ListQueueTagsCommand({ QueueUrl: h.urlOf("t") }))).Tags).toEqual({ b: "2" });
  });

  it("purges and deletes queues", async () => {
    const url = (await h.sqs.send(new CreateQueueCommand({ QueueName: "p" }))).QueueUrl!;
    await h.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" }));
    await h.sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    expect((await h.rpc.getQueue({ name: "p" })).queue!.stats!.visible).toBe(0n);
    await h.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    await expectSqsError(
      h.sqs.send(new DeleteQueueCommand({ QueueUrl: url })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new PurgeQueueCommand({ QueueUrl: url })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
    await expectSqsError(
      h.sqs.send(new PurgeQueueCommand({ QueueUrl: "not a url" })),
      "AWS.SimpleQueueService.NonExistentQueue",
      400,
    );
  });
});
